//! IB timer encodings (IBA 9.7.6.1.3 local ACK timeout, 9.7.5.2.8 RNR NAK timer) and the time
//! scale that may shorten them (`SOFT_MLX5_TIME_SCALE`, default 1): order and counts stay.

use std::time::Duration;

/// The RNR NAK timer values of IBA table 45, in microseconds, by encoding.
const RNR_US: [u64; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1_280, 1_920, 2_560, 3_840, 5_120, 7_680,
    10_240, 15_360, 20_480, 30_720, 40_960, 61_440, 81_920, 122_880, 163_840, 245_760, 327_680, 491_520,
];

fn scale() -> f64 {
    std::env::var("SOFT_MLX5_TIME_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0)
}

/// The RNR wait a responder's `min_rnr_timer` asks for.
pub fn rnr_delay(min_rnr_timer: u8) -> Duration {
    Duration::from_micros(RNR_US[usize::from(min_rnr_timer & 31)]).mul_f64(scale())
}

/// How long the kernel waits for a RoCE neighbour that never answers before `ibv_create_ah`
/// fails: `ib_resolve_eth_dmac` -> `rdma_addr_find_l2_eth_by_grh` -> `rdma_resolve_ip(...,
/// 1000)` (drivers/infiniband/core/addr.c; `process_one_req` turns the neighbour's -ENODATA
/// into -ETIMEDOUT once the request's 1000 ms are up), scaled as the other timers.
pub fn neighbour_timeout() -> Duration {
    Duration::from_millis(1000).mul_f64(scale())
}

/// The local ACK timeout: 4.096 us * 2^timeout; 0 means infinite (None).
pub fn ack_timeout(timeout: u8) -> Option<Duration> {
    if timeout == 0 {
        return None;
    }
    Some(Duration::from_nanos(4096u64 << timeout.min(31)).mul_f64(scale()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rnr_timer_12_is_640_microseconds_and_0_is_the_longest() {
        assert_eq!(RNR_US[12], 640);
        assert_eq!(*RNR_US.iter().max().unwrap(), RNR_US[0]);
    }

    #[test]
    fn ack_timeout_14_is_about_67_ms_and_0_is_infinite() {
        assert!(ack_timeout(0).is_none());
        let t = Duration::from_nanos(4096 << 14);
        assert_eq!(t.as_millis(), 67);
    }
}
