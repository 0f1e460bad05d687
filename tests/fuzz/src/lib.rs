//! What the fuzz targets share: the address formats' header rules, written out from their
//! documentation (mlx5dv/src/addr.rs, mlx5dv/src/cm/sidr.rs) rather than taken from the code
//! under test, and the MTUs.

use mlx5dv::addr::{AddrError, Mtu, FORMAT_VERSION, MAGIC};

/// Every path MTU.
pub const MTUS: [Mtu; 5] = [Mtu::Mtu256, Mtu::Mtu512, Mtu::Mtu1024, Mtu::Mtu2048, Mtu::Mtu4096];

/// Length of the header every address blob starts with.
pub const HEADER_LEN: usize = 8;

/// The error the documented checks of a blob's first six bytes give, in their order (at
/// least a header long, then magic, version, kind), or None when those bytes pass.
/// `expected_len`: what a length error reports as expected.
pub fn magic_version_kind_error(data: &[u8], kind: u8, expected_len: usize) -> Option<AddrError> {
    if data.len() < HEADER_LEN {
        return Some(AddrError::Length {
            expected: expected_len,
            got: data.len(),
        });
    }
    let magic = [data[0], data[1], data[2], data[3]];
    if magic != MAGIC {
        return Some(AddrError::Magic { got: magic });
    }
    if data[4] != FORMAT_VERSION {
        return Some(AddrError::Version {
            got: data[4],
            supported: FORMAT_VERSION,
        });
    }
    if data[5] != kind {
        return Some(AddrError::Kind {
            expected: kind,
            got: data[5],
        });
    }
    None
}

/// Every error says something a person can act on.
pub fn check_display(e: &AddrError) {
    let shown = e.to_string();
    assert!(shown.len() > 20, "{e:?} displays as {shown:?}");
}

/// A `Reserved` error names a byte of the blob that is not zero.
pub fn check_reserved_names_a_set_byte(data: &[u8], e: &AddrError) {
    if let AddrError::Reserved { offset } = *e {
        assert!(
            data.get(offset).is_some_and(|&b| b != 0),
            "{e:?} names a byte that is zero or outside the {}-byte blob",
            data.len()
        );
    }
}
