//! DCI streams: how a `Streams` pool's DCIs are built and recovered on a given device.

use crate::error::{Error, Result};

/// How a `Streams` pool's DCIs are built and recovered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct StreamsPlan {
    /// The `log_errored` the DCIs are created with.
    pub(super) log_errored: u8,
    /// Whether a stream error is recovered by resetting the stream (per-stream isolation).
    /// False where the DCIs tolerate no errored stream: the first stream error takes the DCI
    /// to ERR (and the device refuses stream resets), so the pool recovers the whole DCI.
    pub(super) reset_streams: bool,
}

/// The plan for `Policy::Streams { log_concurrent, log_errored }` on a device reporting
/// `device` as its DCI streams caps (max log2 concurrent, max log2 errored; None: none).
///
/// A device with `max_log_num_errored` 0 gets DCIs with `log_errored` 0, whatever was asked,
/// recovered as a whole (the fallback [`super::DciPool::new`] documents); `log_errored` 0 asked of
/// any device means the same.
pub(super) fn streams_plan(device: Option<(u8, u8)>, log_concurrent: u8, log_errored: u8) -> Result<StreamsPlan> {
    const OP: &str = "DciPool::new";
    let (max_concurrent, max_errored) = match device {
        Some((c, e)) if c > 0 => (c, e),
        _ => {
            return Err(Error::from_errno(
                OP,
                libc::EOPNOTSUPP,
                "Policy::Streams needs DCI streams, and the device reports none (mlx5dv_query_device: \
                 dci_streams_caps.max_log_num_concurent is 0 or absent): use another Policy (Dcs, DcsQuota or Rand)",
            ))
        }
    };
    if log_concurrent > max_concurrent {
        return Err(Error::invalid(
            OP,
            format!(
                "Policy::Streams asks for 2^{log_concurrent} streams per DCI, the device allows 2^{max_concurrent} \
                 (max_log_num_concurent): ask for log_concurrent {max_concurrent} at most"
            ),
        ));
    }
    if max_errored == 0 {
        return Ok(StreamsPlan {
            log_errored: 0,
            reset_streams: false,
        });
    }
    if log_errored > max_errored {
        return Err(Error::invalid(
            OP,
            format!(
                "Policy::Streams asks for 2^{log_errored} errored streams per DCI, the device allows 2^{max_errored} \
                 (max_log_num_errored): ask for log_errored {max_errored} at most"
            ),
        ));
    }
    Ok(StreamsPlan {
        log_errored,
        reset_streams: log_errored > 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_on_a_device_with_no_errored_streams_fall_back_to_recovering_the_whole_dci() {
        // max_log_num_errored 0: the first stream error takes the DCI to ERR and stream resets
        // are refused, so nothing may promise per-stream isolation there.
        for asked in [0, 1, 4] {
            assert_eq!(
                streams_plan(Some((4, 0)), 2, asked).unwrap(),
                StreamsPlan {
                    log_errored: 0,
                    reset_streams: false
                },
                "log_errored {asked} asked"
            );
        }
    }

    #[test]
    fn streams_reset_streams_only_where_the_dcis_tolerate_an_errored_stream() {
        assert_eq!(
            streams_plan(Some((4, 4)), 2, 1).unwrap(),
            StreamsPlan {
                log_errored: 1,
                reset_streams: true
            }
        );
        assert_eq!(
            streams_plan(Some((4, 4)), 2, 0).unwrap(),
            StreamsPlan {
                log_errored: 0,
                reset_streams: false
            },
            "log_errored 0: the first error takes the DCI to ERR"
        );
    }

    #[test]
    fn streams_without_dci_streams_are_refused_naming_the_pool_and_saying_use_another_policy() {
        for device in [None, Some((0, 0)), Some((0, 3))] {
            let e = streams_plan(device, 1, 0).unwrap_err();
            assert_eq!((e.op(), e.errno()), ("DciPool::new", Some(libc::EOPNOTSUPP)));
            assert!(e.hint().contains("use another Policy"), "{e}");
        }
    }

    #[test]
    fn streams_beyond_the_devices_caps_are_refused_naming_the_limit() {
        let e = streams_plan(Some((2, 1)), 3, 0).unwrap_err();
        assert_eq!(e.errno(), Some(libc::EINVAL));
        assert!(e.hint().contains("log_concurrent 2 at most"), "{e}");
        let e = streams_plan(Some((2, 1)), 2, 2).unwrap_err();
        assert!(e.hint().contains("log_errored 1 at most"), "{e}");
    }
}
