//! A DC node over plain libibverbs + libmlx5 (src/dc.c): a DC target over a registered buffer
//! and a DC initiator that RDMA-writes into any node's target. An example of a crate that is not
//! mlx5dv testing itself on emulated ConnectX nodes with the `soft-mlx5` tool.
#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{c_char, c_int, CStr, CString};

/// The C side's view of a target (`struct dcw_target`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// DCT number.
    pub dctn: u32,
    /// Port LID (InfiniBand).
    pub lid: u16,
    /// Port GID (RoCE).
    pub gid: [u8; 16],
    /// Remote key of the buffer.
    pub rkey: u32,
    /// Buffer address.
    pub addr: u64,
    /// Buffer length.
    pub len: u64,
}

#[repr(C)]
struct RawNode {
    _private: [u8; 0],
}

extern "C" {
    fn dcw_open(
        dev: *const c_char,
        gid_index: c_int,
        len: usize,
        dc_key: u64,
        err: *mut c_char,
        errlen: usize,
    ) -> *mut RawNode;
    fn dcw_close(n: *mut RawNode);
    fn dcw_target(n: *const RawNode, t: *mut Target);
    fn dcw_buf(n: *mut RawNode) -> *mut u8;
    #[allow(clippy::too_many_arguments)]
    fn dcw_write(
        n: *mut RawNode,
        t: *const Target,
        dc_key: u64,
        loff: usize,
        roff: u64,
        len: usize,
        err: *mut c_char,
        errlen: usize,
    ) -> c_int;
}

/// How a write failed.
#[derive(Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The completion carried this `ibv_wc_status` (e.g. 12 retry exceeded, 10 remote access).
    Completion(i32, String),
    /// A verbs call failed with this errno.
    Call(i32, String),
}

/// `IBV_WC_REM_ACCESS_ERR`.
pub const WC_REM_ACCESS_ERR: i32 = 10;
/// `IBV_WC_RETRY_EXC_ERR`.
pub const WC_RETRY_EXC_ERR: i32 = 12;

/// One node: a device context with a DCT over a buffer and a DCI.
pub struct Node {
    raw: *mut RawNode,
    len: usize,
}

impl Node {
    /// Opens `device` (GID index `gid_index` on RoCE) with a `len`-byte buffer behind a DCT
    /// keyed `dc_key`.
    ///
    /// # Errors
    ///
    /// The verbs call that failed, with its errno.
    pub fn open(device: &str, gid_index: i32, len: usize, dc_key: u64) -> Result<Node, String> {
        let dev = CString::new(device).map_err(|_| "device name with a NUL".to_string())?;
        let mut err = [0 as c_char; 256];
        // SAFETY: dev is a C string; err has room for errlen bytes.
        let raw = unsafe { dcw_open(dev.as_ptr(), gid_index, len, dc_key, err.as_mut_ptr(), err.len()) };
        if raw.is_null() {
            return Err(text(&err));
        }
        Ok(Node { raw, len })
    }

    /// What others need to write into this node's buffer.
    pub fn target(&self) -> Target {
        let mut t = Target::default();
        // SAFETY: raw is open; t is a valid out-pointer of the C layout.
        unsafe { dcw_target(self.raw, &mut t) };
        t
    }

    /// The buffer (the target side of writes, the source of this node's writes).
    pub fn buf(&mut self) -> &mut [u8] {
        // SAFETY: the C side allocated len bytes that live as long as the node.
        unsafe { std::slice::from_raw_parts_mut(dcw_buf(self.raw), self.len) }
    }

    /// RDMA-writes `len` bytes from `local` of this node's buffer to `remote` of `t`'s, with DC key `key`.
    ///
    /// # Errors
    ///
    /// [`WriteError`]: the completion's status or the failed call.
    pub fn write(&mut self, t: &Target, key: u64, local: usize, remote: u64, len: usize) -> Result<(), WriteError> {
        let mut err = [0 as c_char; 256];
        // SAFETY: raw is open, t points to a Target, err has room for errlen bytes.
        let rc = unsafe { dcw_write(self.raw, t, key, local, remote, len, err.as_mut_ptr(), err.len()) };
        match rc {
            0 => Ok(()),
            s if s > 0 => Err(WriteError::Completion(s, text(&err))),
            e => Err(WriteError::Call(-e, text(&err))),
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        // SAFETY: raw came from dcw_open and is closed once.
        unsafe { dcw_close(self.raw) };
    }
}

fn text(err: &[c_char]) -> String {
    // SAFETY: the C side wrote a NUL-terminated message (snprintf) into the zeroed buffer.
    unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned()
}

impl Target {
    /// One line of text: `dctn lid gid(hex) rkey addr len`.
    pub fn encode(&self) -> String {
        let gid: String = self.gid.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{} {} {gid} {} {} {}",
            self.dctn, self.lid, self.rkey, self.addr, self.len
        )
    }

    /// The inverse of [`Target::encode`].
    ///
    /// # Errors
    ///
    /// What is wrong with the text.
    pub fn decode(s: &str) -> Result<Target, String> {
        let f: Vec<&str> = s.split_whitespace().collect();
        if f.len() != 6 || f[2].len() != 32 {
            return Err(format!("not a target: {s:?}"));
        }
        let num = |i: usize| f[i].parse::<u64>().map_err(|e| format!("field {i} of {s:?}: {e}"));
        let mut gid = [0u8; 16];
        for (i, g) in gid.iter_mut().enumerate() {
            *g = u8::from_str_radix(&f[2][2 * i..2 * i + 2], 16).map_err(|e| format!("gid of {s:?}: {e}"))?;
        }
        Ok(Target {
            dctn: u32::try_from(num(0)?).map_err(|e| e.to_string())?,
            lid: u16::try_from(num(1)?).map_err(|e| e.to_string())?,
            gid,
            rkey: u32::try_from(num(3)?).map_err(|e| e.to_string())?,
            addr: num(4)?,
            len: num(5)?,
        })
    }
}
