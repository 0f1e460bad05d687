//! RDMA netlink (`NETLINK_RDMA`, the nldev client) as ib_core answers it for the emulated
//! device: what `rdma dev`/`rdma link` (iproute2) and libibverbs' netlink discovery
//! (`libibverbs/ibdev_nl.c`: dump RDMA_NLDEV_CMD_GET, then RDMA_NLDEV_CMD_GET_CHARDEV "uverbs"
//! per device) ask, answered from the profile the rest of the crate uses.
//!
//! [`reply`] is the kernel side of one `sendmsg`: `rdma_nl_rcv_skb` walking the request's
//! messages, `rdma_nl_rcv_msg` choosing doit or dump, and the nldev handlers of
//! `drivers/infiniband/core/nldev.c` (`nldev_get_doit`/`_nldev_get_dumpit`,
//! `nldev_port_get_doit`/`nldev_port_get_dumpit`, `nldev_sys_get_doit`, `nldev_get_chardev`)
//! filling attributes as `fill_nldev_handle`, `fill_dev_info` and `fill_port_info` do. Each
//! returned datagram is what one `recvmsg` on a netlink socket would read: a doit's reply, the
//! ack (`netlink_ack`), a dump's entries with NLM_F_MULTI, then NLMSG_DONE on its own.
//!
//! Commands the emulation does not model (resource tracking, counters, renames, links) are
//! answered NLMSG_ERROR -EOPNOTSUPP. Attributes are those of the installed uapi header
//! (`/usr/include/rdma/rdma_netlink.h`); no netdev is reported (the device has none), so
//! RDMA_NLDEV_ATTR_NDEV_* never appear.

use crate::profile::{LinkLayer, Profile, NODE_GUID_BASE};
use crate::sysfs::{CDEV_PATH, IBDEV, UVERBS_DEV};

/// The netlink protocol number of RDMA netlink (`<linux/netlink.h>` NETLINK_RDMA).
pub const NETLINK_RDMA: i32 = 20;
/// The nldev client index (`enum rdma_nl_clients` RDMA_NL_NLDEV).
pub const RDMA_NL_NLDEV: u16 = 5;

/// `RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op)`: the nlmsg_type of nldev command `op`.
pub const fn nldev_type(op: u16) -> u16 {
    (RDMA_NL_NLDEV << 10) + op
}

/// `enum rdma_nldev_command` values answered here.
pub mod cmd {
    /// Device query (doit with DEV_INDEX, or dump of all devices).
    pub const GET: u16 = 1;
    /// Port query (doit with DEV_INDEX and PORT_INDEX, or dump of a device's ports).
    pub const PORT_GET: u16 = 5;
    /// System-wide settings (netns mode, copy-on-fork).
    pub const SYS_GET: u16 = 6;
    /// Resource summary (not modelled: answered -EOPNOTSUPP).
    pub const RES_GET: u16 = 9;
    /// Character device of a client ("uverbs") for a device.
    pub const GET_CHARDEV: u16 = 15;
}

/// `enum rdma_nldev_attr` values used here.
pub mod attr {
    /// u32: device index.
    pub const DEV_INDEX: u16 = 1;
    /// NUL string: device name.
    pub const DEV_NAME: u16 = 2;
    /// u32: port number (in a device reply: the last port, `rdma_end_port`).
    pub const PORT_INDEX: u16 = 3;
    /// u64: device_cap_flags (device) or port_cap_flags | cap_mask2 << 32 (IB port).
    pub const CAP_FLAGS: u16 = 4;
    /// NUL string: firmware version.
    pub const FW_VERSION: u16 = 5;
    /// u64: node GUID in host order (`be64_to_cpu(device->node_guid)`).
    pub const NODE_GUID: u16 = 6;
    /// u64: system image GUID in host order.
    pub const SYS_IMAGE_GUID: u16 = 7;
    /// u64: subnet prefix of GID 0 in host order (IB ports).
    pub const SUBNET_PREFIX: u16 = 8;
    /// u32: port LID (IB ports).
    pub const LID: u16 = 9;
    /// u32: SM LID (IB ports).
    pub const SM_LID: u16 = 10;
    /// u8: LID mask count (IB ports).
    pub const LMC: u16 = 11;
    /// u8: `enum ib_port_state`.
    pub const PORT_STATE: u16 = 12;
    /// u8: `enum ib_port_phys_state`.
    pub const PORT_PHYS_STATE: u16 = 13;
    /// u8: `enum rdma_node_type` (1: RDMA_NODE_IB_CA).
    pub const DEV_NODE_TYPE: u16 = 14;
    /// u8: RDMA netns mode (1: shared).
    pub const SYS_NETNS_MODE: u16 = 66;
    /// NUL string: "ib", "roce", "iw", "opa" or "usnic".
    pub const DEV_PROTOCOL: u16 = 67;
    /// NUL string (request): the client whose char device is asked for ("uverbs").
    pub const CHARDEV_TYPE: u16 = 69;
    /// NUL string: the char device's name ("uverbs0").
    pub const CHARDEV_NAME: u16 = 70;
    /// u64: the client's ABI version (`ops.uverbs_abi_ver`).
    pub const CHARDEV_ABI: u16 = 71;
    /// u64: `huge_encode_dev(devt)` of the char device.
    pub const CHARDEV: u16 = 72;
    /// u32 (the header says u64; the kernel puts and libibverbs reads a u32): `enum rdma_driver_id`.
    pub const UVERBS_DRIVER_ID: u16 = 73;
    /// u8: adaptive CQ moderation (`use_cq_dim`).
    pub const DEV_DIM: u16 = 84;
    /// u8: copy-on-fork supported.
    pub const SYS_COPY_ON_FORK: u16 = 93;
}

/// `<linux/netlink.h>` message types and flags.
pub mod nl {
    /// No-op message.
    pub const NLMSG_NOOP: u16 = 1;
    /// Error (or, with error 0, acknowledgement).
    pub const NLMSG_ERROR: u16 = 2;
    /// End of a multi-part dump.
    pub const NLMSG_DONE: u16 = 3;
    /// Lowest type that is not a control message.
    pub const NLMSG_MIN_TYPE: u16 = 0x10;
    /// A request.
    pub const NLM_F_REQUEST: u16 = 1;
    /// Part of a multi-part reply.
    pub const NLM_F_MULTI: u16 = 2;
    /// Acknowledge the request.
    pub const NLM_F_ACK: u16 = 4;
    /// Dump (NLM_F_ROOT | NLM_F_MATCH).
    pub const NLM_F_DUMP: u16 = 0x300;
    /// The error message carries only the request's header.
    pub const NLM_F_CAPPED: u16 = 0x100;
    /// Size of `struct nlmsghdr`.
    pub const NLMSG_HDRLEN: usize = 16;
}

/// `enum rdma_driver_id` RDMA_DRIVER_MLX5: mlx5_ib_dev_ops.driver_id (mlx5 does not set
/// `uverbs_no_driver_id_binding`, so ib_uverbs_get_nl_info reports it).
const RDMA_DRIVER_MLX5: u32 = 1;
/// `MLX5_IB_UVERBS_ABI_VERSION` (mlx5_ib_dev_ops.uverbs_abi_ver), as sysfs `abi_version`.
const MLX5_UVERBS_ABI: u64 = 1;
/// device_cap_flags, as QUERY_DEVICE reports them (kernel/write.rs `query_device_base`).
const DEVICE_CAP_FLAGS: u64 = 0x0003_1c36;
/// Port 1 port_cap_flags on InfiniBand (cap_mask2 0), as QUERY_PORT and sysfs `cap_mask`.
const IB_PORT_CAP_FLAGS: u64 = 0x2651_e848;
/// `enum ib_port_phys_state` IB_PORT_PHYS_STATE_LINK_UP.
const PHYS_STATE_LINK_UP: u8 = 5;

/// The emulated device the responder describes: one device (index 0, [`IBDEV`]) with port 1.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// Which ConnectX.
    pub profile: &'static Profile,
    /// Node index (GUID and LID offset), as `SOFT_MLX5_NODE`.
    pub node: u32,
    /// Port 1 state (`enum ib_port_state`; 4 ACTIVE, as a new device starts).
    pub port_state: u8,
}

impl Node {
    /// The device of `SOFT_MLX5_PROFILE` and `SOFT_MLX5_NODE` (as `device::global` makes it),
    /// port active.
    pub fn from_env() -> Self {
        let node = std::env::var("SOFT_MLX5_NODE")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        Node {
            profile: Profile::from_env(),
            node,
            port_state: 4,
        }
    }

    fn guid(&self) -> u64 {
        NODE_GUID_BASE + u64::from(self.node)
    }
}

/// The device index ib_core gave the emulated device (the first registered gets 0).
const DEV_INDEX: u32 = 0;
/// Its only port.
const PORT: u32 = 1;

/// One netlink message being built: header, then 4-byte aligned attributes.
struct Msg(Vec<u8>);

impl Msg {
    /// `nlmsg_put`: a header of `ty` with `flags`, echoing `seq`, addressed to `portid`.
    fn new(ty: u16, flags: u16, seq: u32, portid: u32) -> Self {
        let mut b = Vec::with_capacity(256);
        b.extend_from_slice(&0u32.to_ne_bytes());
        b.extend_from_slice(&ty.to_ne_bytes());
        b.extend_from_slice(&flags.to_ne_bytes());
        b.extend_from_slice(&seq.to_ne_bytes());
        b.extend_from_slice(&portid.to_ne_bytes());
        Msg(b)
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    /// `nla_put`: nla_len covers header and payload; the padding to 4 bytes follows.
    fn put(&mut self, ty: u16, payload: &[u8]) {
        let len = (4 + payload.len()) as u16;
        self.0.extend_from_slice(&len.to_ne_bytes());
        self.0.extend_from_slice(&ty.to_ne_bytes());
        self.0.extend_from_slice(payload);
        self.0.resize(self.0.len().next_multiple_of(4), 0);
    }

    fn u8(&mut self, ty: u16, v: u8) {
        self.put(ty, &[v]);
    }

    fn u32(&mut self, ty: u16, v: u32) {
        self.put(ty, &v.to_ne_bytes());
    }

    /// `nla_put_u64_64bit`: no pad attribute on 64-bit hosts (efficient unaligned access).
    fn u64(&mut self, ty: u16, v: u64) {
        self.put(ty, &v.to_ne_bytes());
    }

    /// `nla_put_string`: the string with its NUL.
    fn string(&mut self, ty: u16, s: &str) {
        let mut b = Vec::with_capacity(s.len() + 1);
        b.extend_from_slice(s.as_bytes());
        b.push(0);
        self.put(ty, &b);
    }

    /// `nlmsg_end`: sets nlmsg_len.
    fn end(mut self) -> Vec<u8> {
        let len = self.0.len() as u32;
        self.0[0..4].copy_from_slice(&len.to_ne_bytes());
        self.0
    }
}

/// One request message: its header fields and attributes (`nlmsg_parse`, last one wins).
struct Request<'a> {
    ty: u16,
    flags: u16,
    seq: u32,
    attrs: Vec<(u16, &'a [u8])>,
}

impl<'a> Request<'a> {
    fn attr(&self, ty: u16) -> Option<&'a [u8]> {
        self.attrs.iter().rev().find(|(t, _)| *t == ty).map(|(_, p)| *p)
    }

    /// NLA_U32 by policy: at least 4 bytes, else the parse fails (-EINVAL).
    fn u32(&self, ty: u16) -> Result<Option<u32>, i32> {
        match self.attr(ty) {
            None => Ok(None),
            Some(p) if p.len() >= 4 => Ok(Some(u32::from_ne_bytes([p[0], p[1], p[2], p[3]]))),
            Some(_) => Err(libc::EINVAL),
        }
    }

    /// NLA_NUL_STRING: the bytes up to the NUL.
    fn string(&self, ty: u16) -> Option<&'a [u8]> {
        self.attr(ty).map(|p| p.split(|&b| b == 0).next().unwrap_or(p))
    }
}

/// Splits `msg` (one whole message) into header fields and attributes; None when an
/// attribute overruns the message (the kernel's parse then fails with -EINVAL).
fn parse(msg: &[u8]) -> Option<Request<'_>> {
    let mut attrs = Vec::new();
    let mut rest = &msg[nl::NLMSG_HDRLEN..];
    while rest.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let ty = u16::from_ne_bytes([rest[2], rest[3]]) & 0x3fff;
        if len < 4 || len > rest.len() {
            return None;
        }
        attrs.push((ty, &rest[4..len]));
        rest = &rest[len.next_multiple_of(4).min(rest.len())..];
    }
    Some(Request {
        ty: u16::from_ne_bytes([msg[4], msg[5]]),
        flags: u16::from_ne_bytes([msg[6], msg[7]]),
        seq: u32::from_ne_bytes([msg[8], msg[9], msg[10], msg[11]]),
        attrs,
    })
}

/// What the kernel does with one request: datagrams to queue, and the errno for
/// `netlink_ack` (None: a dump was started, which is never acked).
struct Outcome {
    out: Vec<Vec<u8>>,
    err: Option<i32>,
}

/// The replies to the request datagram `request`, sent by the socket bound to `portid`
/// (every reply carries it as nlmsg_pid, as `NETLINK_CB(skb).portid`), for device `node`.
///
/// Messages are handled in order as `rdma_nl_rcv_skb` does: a truncated message ends the
/// walk; a message without NLM_F_REQUEST, or a control message, is only acked when asked.
pub fn reply(request: &[u8], portid: u32, node: &Node) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = request;
    while rest.len() >= nl::NLMSG_HDRLEN {
        let len = u32::from_ne_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        if len < nl::NLMSG_HDRLEN || len > rest.len() {
            break;
        }
        let msg = &rest[..len];
        rest = &rest[len.next_multiple_of(4).min(rest.len())..];
        let flags = u16::from_ne_bytes([msg[6], msg[7]]);
        let ty = u16::from_ne_bytes([msg[4], msg[5]]);
        let err = if flags & nl::NLM_F_REQUEST == 0 || ty < nl::NLMSG_MIN_TYPE {
            Some(0)
        } else {
            match parse(msg) {
                Some(req) => {
                    let o = handle(&req, portid, node);
                    out.extend(o.out);
                    o.err
                }
                None => Some(-libc::EINVAL),
            }
        };
        if let Some(err) = err {
            if err != 0 || flags & nl::NLM_F_ACK != 0 {
                out.push(ack(msg, portid, err));
            }
        }
    }
    out
}

/// `netlink_ack`: NLMSG_ERROR carrying `err` (negative errno, or 0 for an ack) and the
/// request's header, capped as a NETLINK_CAP_ACK socket gets it.
fn ack(request: &[u8], portid: u32, err: i32) -> Vec<u8> {
    let seq = u32::from_ne_bytes([request[8], request[9], request[10], request[11]]);
    let mut m = Msg::new(nl::NLMSG_ERROR, nl::NLM_F_CAPPED, seq, portid);
    m.raw(&err.to_ne_bytes());
    m.raw(&request[..nl::NLMSG_HDRLEN]);
    m.end()
}

/// `rdma_nl_rcv_msg` for one nldev request.
fn handle(req: &Request<'_>, portid: u32, node: &Node) -> Outcome {
    let doit = |r: Result<Vec<u8>, i32>| match r {
        Ok(m) => Outcome {
            out: vec![m],
            err: Some(0),
        },
        Err(e) => Outcome {
            out: Vec::new(),
            err: Some(-e),
        },
    };
    let dump = |r: Result<Vec<Vec<u8>>, i32>| {
        // netlink_dump: the entries in one skb, then NLMSG_DONE carrying the dumpit's
        // result (0, or the negative errno it failed with) in its own.
        let (mut out, status) = match r {
            Ok(m) => (m, 0i32),
            Err(e) => (Vec::new(), -e),
        };
        let mut done = Msg::new(nl::NLMSG_DONE, nl::NLM_F_MULTI, req.seq, portid);
        done.raw(&status.to_ne_bytes());
        out.push(done.end());
        Outcome { out, err: None }
    };
    if req.ty >> 10 != RDMA_NL_NLDEV {
        return Outcome {
            out: Vec::new(),
            err: Some(-libc::EOPNOTSUPP),
        };
    }
    let is_dump = req.flags & nl::NLM_F_DUMP != 0;
    match (req.ty & 0x3ff, is_dump) {
        (cmd::GET, false) => doit(get_doit(req, portid, node)),
        (cmd::GET, true) => dump(Ok(vec![dev_info(
            Msg::new(nldev_type(cmd::GET), nl::NLM_F_MULTI, req.seq, portid),
            node,
        )])),
        (cmd::PORT_GET, false) => doit(port_get_doit(req, portid, node)),
        (cmd::PORT_GET, true) => dump(port_get_dumpit(req, portid, node)),
        (cmd::SYS_GET, false) => doit(Ok(sys_get(req, portid))),
        (cmd::GET_CHARDEV, false) => doit(get_chardev(req, portid)),
        // rdma_nl_rcv_msg: a dump request of a command without a dumpit.
        (cmd::SYS_GET | cmd::GET_CHARDEV, true) => Outcome {
            out: Vec::new(),
            err: Some(-libc::EINVAL),
        },
        _ => Outcome {
            out: Vec::new(),
            err: Some(-libc::EOPNOTSUPP),
        },
    }
}

/// `ib_device_get_by_index`: only index 0 exists; a missing index is -EINVAL.
fn device(req: &Request<'_>) -> Result<(), i32> {
    match req.u32(attr::DEV_INDEX)? {
        Some(DEV_INDEX) => Ok(()),
        _ => Err(libc::EINVAL),
    }
}

/// `fill_nldev_handle`.
fn handle_attrs(m: &mut Msg) {
    m.u32(attr::DEV_INDEX, DEV_INDEX);
    m.string(attr::DEV_NAME, IBDEV);
}

/// `fill_dev_info`.
fn dev_info(mut m: Msg, node: &Node) -> Vec<u8> {
    let p = node.profile;
    handle_attrs(&mut m);
    m.u32(attr::PORT_INDEX, PORT);
    m.u64(attr::CAP_FLAGS, DEVICE_CAP_FLAGS);
    // ib_get_device_fw_str (mlx5_ib get_dev_fw_str), as sysfs fw_ver shows it.
    m.string(attr::FW_VERSION, &format!("{}.{}.{}", p.fw.0, p.fw.1, p.fw.2));
    m.u64(attr::NODE_GUID, node.guid());
    m.u64(attr::SYS_IMAGE_GUID, node.guid());
    m.u8(attr::DEV_NODE_TYPE, 1);
    // mlx5_ib_stage_caps_init sets use_cq_dim.
    m.u8(attr::DEV_DIM, 1);
    m.string(
        attr::DEV_PROTOCOL,
        match p.link_layer {
            LinkLayer::InfiniBand => "ib",
            LinkLayer::Ethernet => "roce",
        },
    );
    m.end()
}

/// `fill_port_info` for port 1 (no netdev: NDEV_INDEX/NDEV_NAME are left out).
fn port_info(mut m: Msg, node: &Node) -> Vec<u8> {
    let p = node.profile;
    handle_attrs(&mut m);
    m.u32(attr::PORT_INDEX, PORT);
    if p.link_layer == LinkLayer::InfiniBand {
        m.u64(attr::CAP_FLAGS, IB_PORT_CAP_FLAGS);
        // be64_to_cpu of GID 0's subnet prefix: the link-local fe80::/64.
        m.u64(attr::SUBNET_PREFIX, 0xfe80_0000_0000_0000);
        m.u32(attr::LID, u32::from(p.lid_of(node.node)));
        m.u32(attr::SM_LID, u32::from(p.lid_of(0)));
        m.u8(attr::LMC, 0);
    }
    m.u8(attr::PORT_STATE, node.port_state);
    m.u8(attr::PORT_PHYS_STATE, PHYS_STATE_LINK_UP);
    m.end()
}

/// `nldev_get_doit`.
fn get_doit(req: &Request<'_>, portid: u32, node: &Node) -> Result<Vec<u8>, i32> {
    device(req)?;
    Ok(dev_info(Msg::new(nldev_type(cmd::GET), 0, req.seq, portid), node))
}

/// `nldev_port_get_doit`: the reply's type is RDMA_NLDEV_CMD_GET, as the kernel sends it.
fn port_get_doit(req: &Request<'_>, portid: u32, node: &Node) -> Result<Vec<u8>, i32> {
    device(req)?;
    if req.u32(attr::PORT_INDEX)? != Some(PORT) {
        return Err(libc::EINVAL);
    }
    Ok(port_info(Msg::new(nldev_type(cmd::GET), 0, req.seq, portid), node))
}

/// `nldev_port_get_dumpit`: every port of the device DEV_INDEX names.
fn port_get_dumpit(req: &Request<'_>, portid: u32, node: &Node) -> Result<Vec<Vec<u8>>, i32> {
    device(req)?;
    let m = Msg::new(nldev_type(cmd::PORT_GET), nl::NLM_F_MULTI, req.seq, portid);
    Ok(vec![port_info(m, node)])
}

/// `nldev_sys_get_doit`: netns mode shared (the default), copy-on-fork supported.
fn sys_get(req: &Request<'_>, portid: u32) -> Vec<u8> {
    let mut m = Msg::new(nldev_type(cmd::SYS_GET), 0, req.seq, portid);
    m.u8(attr::SYS_NETNS_MODE, 1);
    m.u8(attr::SYS_COPY_ON_FORK, 1);
    m.end()
}

/// `huge_encode_dev` (new_encode_dev) of a device number.
pub const fn huge_encode_dev(major: u32, minor: u32) -> u64 {
    ((minor & 0xff) | (major << 8) | ((minor & !0xff) << 12)) as u64
}

/// `nldev_get_chardev` with ib_uverbs' `ib_uverbs_get_nl_info`: "uverbs" of device 0 is
/// uverbs0 (231:192); it has no port-scoped or global char device, and no other client has
/// one here (-EOPNOTSUPP, as `ib_get_client_nl_info` for a client that is not there).
fn get_chardev(req: &Request<'_>, portid: u32) -> Result<Vec<u8>, i32> {
    let client = req.string(attr::CHARDEV_TYPE).ok_or(libc::EINVAL)?;
    let port = req.u32(attr::PORT_INDEX)?;
    if req.attr(attr::DEV_INDEX).is_none() {
        if port.is_some() {
            return Err(libc::EINVAL);
        }
        // __ib_get_global_client_nl_info: uverbs has no global char device.
        return Err(libc::EOPNOTSUPP);
    }
    device(req)?;
    if port.is_some_and(|p| p != PORT) {
        return Err(libc::EINVAL);
    }
    if client != b"uverbs" {
        return Err(libc::EOPNOTSUPP);
    }
    if port.is_some() {
        // ib_uverbs_get_nl_info: the uverbs device is per ib_device, not per port.
        return Err(libc::EINVAL);
    }
    let mut m = Msg::new(nldev_type(cmd::GET_CHARDEV), 0, req.seq, portid);
    m.u32(attr::UVERBS_DRIVER_ID, RDMA_DRIVER_MLX5);
    m.u64(attr::CHARDEV, huge_encode_dev(UVERBS_DEV.0, UVERBS_DEV.1));
    m.u64(attr::CHARDEV_ABI, MLX5_UVERBS_ABI);
    let name = CDEV_PATH.rsplit('/').next().unwrap_or(CDEV_PATH);
    m.string(attr::CHARDEV_NAME, name);
    Ok(m.end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A parsed reply message: type, flags, seq, pid, and its payload.
    struct Parsed {
        ty: u16,
        flags: u16,
        seq: u32,
        pid: u32,
        payload: Vec<u8>,
    }

    impl Parsed {
        /// The attributes (nla parser: 4-byte aligned, nla_len includes the header).
        fn attrs(&self) -> BTreeMap<u16, Vec<u8>> {
            let mut m = BTreeMap::new();
            let mut rest = &self.payload[..];
            while rest.len() >= 4 {
                let len = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
                let ty = u16::from_ne_bytes([rest[2], rest[3]]);
                assert!(len >= 4 && len <= rest.len(), "attribute {ty} overruns");
                m.insert(ty, rest[4..len].to_vec());
                let next = len.next_multiple_of(4);
                assert!(next <= rest.len(), "attribute {ty} not padded to 4 bytes");
                assert!(rest[len..next].iter().all(|&b| b == 0));
                rest = &rest[next..];
            }
            assert!(rest.is_empty());
            m
        }
    }

    /// Splits one datagram into its messages.
    fn messages(dgram: &[u8]) -> Vec<Parsed> {
        let mut v = Vec::new();
        let mut rest = dgram;
        while !rest.is_empty() {
            let len = u32::from_ne_bytes(rest[0..4].try_into().unwrap()) as usize;
            assert!(len >= 16 && len <= rest.len() && len & 3 == 0);
            v.push(Parsed {
                ty: u16::from_ne_bytes([rest[4], rest[5]]),
                flags: u16::from_ne_bytes([rest[6], rest[7]]),
                seq: u32::from_ne_bytes(rest[8..12].try_into().unwrap()),
                pid: u32::from_ne_bytes(rest[12..16].try_into().unwrap()),
                payload: rest[16..len].to_vec(),
            });
            rest = &rest[len..];
        }
        v
    }

    fn one(dgram: &[u8]) -> Parsed {
        let mut m = messages(dgram);
        assert_eq!(m.len(), 1);
        m.remove(0)
    }

    fn request(op: u16, flags: u16, seq: u32, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        let mut m = Msg::new(nldev_type(op), nl::NLM_F_REQUEST | flags, seq, 0x4242);
        for (t, p) in attrs {
            m.put(*t, p);
        }
        m.end()
    }

    fn node(profile: &str) -> Node {
        Node {
            profile: Profile::by_name(profile).unwrap(),
            node: 0,
            port_state: 4,
        }
    }

    fn u32_of(b: &[u8]) -> u32 {
        u32::from_ne_bytes(b.try_into().unwrap())
    }

    fn u64_of(b: &[u8]) -> u64 {
        u64::from_ne_bytes(b.try_into().unwrap())
    }

    const PORTID: u32 = 777;

    #[test]
    fn device_dump_lists_mlx5_0_then_done() {
        let req = request(cmd::GET, nl::NLM_F_DUMP | nl::NLM_F_ACK, 91, &[]);
        let out = reply(&req, PORTID, &node("cx5-ib"));
        assert_eq!(out.len(), 2, "entries, then NLMSG_DONE, and no ack for a dump");
        let dev = one(&out[0]);
        assert_eq!(
            (dev.ty, dev.flags, dev.seq, dev.pid),
            (nldev_type(cmd::GET), nl::NLM_F_MULTI, 91, PORTID)
        );
        let a = dev.attrs();
        assert_eq!(a[&attr::DEV_NAME], b"mlx5_0\0");
        assert_eq!(u32_of(&a[&attr::DEV_INDEX]), 0);
        assert_eq!(u32_of(&a[&attr::PORT_INDEX]), 1);
        assert_eq!(a[&attr::DEV_NODE_TYPE], [1]);
        assert_eq!(u64_of(&a[&attr::NODE_GUID]), NODE_GUID_BASE);
        assert_eq!(u64_of(&a[&attr::SYS_IMAGE_GUID]), NODE_GUID_BASE);
        assert_eq!(a[&attr::FW_VERSION], b"16.35.2000\0");
        assert_eq!(a[&attr::DEV_PROTOCOL], b"ib\0");
        let done = one(&out[1]);
        assert_eq!(
            (done.ty, done.flags, done.seq, done.pid),
            (nl::NLMSG_DONE, nl::NLM_F_MULTI, 91, PORTID)
        );
        assert_eq!(done.payload, 0i32.to_ne_bytes());
    }

    #[test]
    fn port_query_reports_active_link_up_and_acks() {
        let idx = 0u32.to_ne_bytes();
        let port = 1u32.to_ne_bytes();
        let req = request(
            cmd::PORT_GET,
            nl::NLM_F_ACK,
            5,
            &[(attr::DEV_INDEX, &idx), (attr::PORT_INDEX, &port)],
        );
        let out = reply(&req, PORTID, &node("cx5-ib"));
        assert_eq!(out.len(), 2);
        let p = one(&out[0]);
        assert_eq!((p.seq, p.pid, p.flags), (5, PORTID, 0));
        let a = p.attrs();
        assert_eq!(a[&attr::DEV_NAME], b"mlx5_0\0");
        assert_eq!(u32_of(&a[&attr::PORT_INDEX]), 1);
        assert_eq!(a[&attr::PORT_STATE], [4]);
        assert_eq!(a[&attr::PORT_PHYS_STATE], [5]);
        assert_eq!(u32_of(&a[&attr::LID]), 1);
        assert_eq!(a[&attr::LMC], [0]);
        assert!(!a.contains_key(&50) && !a.contains_key(&51), "no netdev");
        let ack = one(&out[1]);
        assert_eq!((ack.ty, ack.seq, ack.pid), (nl::NLMSG_ERROR, 5, PORTID));
        assert_eq!(i32::from_ne_bytes(ack.payload[0..4].try_into().unwrap()), 0);
        assert_eq!(&ack.payload[4..20], &req[..16], "the ack carries the request header");
    }

    #[test]
    fn roce_port_has_no_lid_and_the_device_says_roce() {
        let n = node("cx6dx-roce");
        let idx = 0u32.to_ne_bytes();
        let out = reply(
            &request(cmd::PORT_GET, nl::NLM_F_DUMP, 1, &[(attr::DEV_INDEX, &idx)]),
            PORTID,
            &n,
        );
        assert_eq!(out.len(), 2);
        let a = one(&out[0]).attrs();
        assert!(!a.contains_key(&attr::LID) && !a.contains_key(&attr::CAP_FLAGS));
        assert_eq!(a[&attr::PORT_STATE], [4]);
        assert_eq!(one(&out[1]).ty, nl::NLMSG_DONE);
        let dev = one(&reply(&request(cmd::GET, 0, 2, &[(attr::DEV_INDEX, &idx)]), PORTID, &n)[0]);
        assert_eq!(dev.attrs()[&attr::DEV_PROTOCOL], b"roce\0");
    }

    #[test]
    fn uverbs_chardev_is_uverbs0_231_192_abi_1() {
        let idx = 0u32.to_ne_bytes();
        let req = request(
            cmd::GET_CHARDEV,
            0,
            33,
            &[(attr::DEV_INDEX, &idx), (attr::CHARDEV_TYPE, b"uverbs\0")],
        );
        let out = reply(&req, PORTID, &node("cx5-ib"));
        assert_eq!(out.len(), 1, "no ack unless asked");
        let m = one(&out[0]);
        assert_eq!((m.ty, m.seq, m.pid), (nldev_type(cmd::GET_CHARDEV), 33, PORTID));
        let a = m.attrs();
        assert_eq!(a[&attr::CHARDEV_NAME], b"uverbs0\0");
        assert_eq!(u64_of(&a[&attr::CHARDEV_ABI]), 1);
        assert_eq!(u32_of(&a[&attr::UVERBS_DRIVER_ID]), RDMA_DRIVER_MLX5);
        // libibverbs' decoding of huge_encode_dev (ibdev_nl.c find_uverbs_nl_cb).
        let c = u64_of(&a[&attr::CHARDEV]);
        assert_eq!(c, 0xe7c0);
        assert_eq!(((c & 0xfff00) >> 8, (c & 0xff) | ((c >> 12) & 0xfff00)), (231, 192));
        let umad = request(
            cmd::GET_CHARDEV,
            0,
            34,
            &[(attr::DEV_INDEX, &idx), (attr::CHARDEV_TYPE, b"umad\0")],
        );
        let e = one(&reply(&umad, PORTID, &node("cx5-ib"))[0]);
        assert_eq!(
            i32::from_ne_bytes(e.payload[0..4].try_into().unwrap()),
            -libc::EOPNOTSUPP
        );
    }

    #[test]
    fn unknown_command_is_eopnotsupp_and_bad_index_is_einval() {
        let out = reply(&request(cmd::RES_GET, nl::NLM_F_DUMP, 8, &[]), PORTID, &node("cx5-ib"));
        let e = one(&out[0]);
        assert_eq!((e.ty, e.seq, e.pid), (nl::NLMSG_ERROR, 8, PORTID));
        assert_eq!(
            i32::from_ne_bytes(e.payload[0..4].try_into().unwrap()),
            -libc::EOPNOTSUPP
        );
        let idx = 3u32.to_ne_bytes();
        let out = reply(
            &request(cmd::GET, 0, 9, &[(attr::DEV_INDEX, &idx)]),
            PORTID,
            &node("cx5-ib"),
        );
        let e = one(&out[0]);
        assert_eq!(i32::from_ne_bytes(e.payload[0..4].try_into().unwrap()), -libc::EINVAL);
    }

    #[test]
    fn several_requests_in_one_datagram_are_answered_in_order() {
        let mut req = request(cmd::SYS_GET, nl::NLM_F_ACK, 1, &[]);
        req.extend(request(cmd::GET, nl::NLM_F_DUMP, 2, &[]));
        let out = reply(&req, PORTID, &node("cx5-ib"));
        let seqs: Vec<(u16, u32)> = out.iter().map(|d| one(d)).map(|m| (m.ty, m.seq)).collect();
        assert_eq!(
            seqs,
            [
                (nldev_type(cmd::SYS_GET), 1),
                (nl::NLMSG_ERROR, 1),
                (nldev_type(cmd::GET), 2),
                (nl::NLMSG_DONE, 2)
            ]
        );
        assert_eq!(one(&out[0]).attrs()[&attr::SYS_COPY_ON_FORK], [1]);
    }
}
