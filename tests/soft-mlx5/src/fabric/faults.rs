//! A lossy wire (`SOFT_MLX5_FAULTS`): seeded loss, duplication, reordering and delay of the
//! messages between devices, so the transport's answers to them (IBA 9.7: timeouts and
//! retries, retry exhaustion, duplicate requests acknowledged again but not executed again,
//! read and atomic responses replayed) are exercised as a real fabric would exercise them.
//!
//! The value is a comma-separated list: `loss=P`, `dup=P`, `reorder=P`, `delay=P` (each a
//! probability per message, 0 to 1) and `seed=N`, e.g. `loss=0.01,seed=7`. The same seed
//! gives the same faults for the same sequence of messages.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;
use std::time::Duration;

/// How long a reordered message is held: messages sent meanwhile overtake it.
pub const REORDER_HOLD: Duration = Duration::from_micros(500);
/// How long a delayed message is held.
pub const DELAY_HOLD: Duration = Duration::from_millis(5);

/// What happens to one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Delivered once, now.
    Deliver,
    /// Never delivered.
    Lose,
    /// Delivered twice.
    Duplicate,
    /// Delivered once, after `Duration`.
    Hold(Duration),
}

/// The fault probabilities and the generator that draws them.
#[derive(Clone, Debug, PartialEq)]
pub struct Faults {
    /// Probability that a message is lost.
    pub loss: f64,
    /// Probability that a message arrives twice.
    pub dup: f64,
    /// Probability that a message is overtaken by the ones sent just after it.
    pub reorder: f64,
    /// Probability that a message arrives late.
    pub delay: f64,
    state: u64,
}

impl Faults {
    /// Parses a `SOFT_MLX5_FAULTS` value; Err says what is wrong with it.
    pub fn parse(spec: &str) -> Result<Faults, String> {
        let mut f = Faults {
            loss: 0.0,
            dup: 0.0,
            reorder: 0.0,
            delay: 0.0,
            state: 0,
        };
        let mut seed = 1u64;
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("{item}: expected key=value"))?;
            if k == "seed" {
                seed = v.parse().map_err(|_| format!("{item}: the seed is an integer"))?;
                continue;
            }
            let p: f64 = v.parse().map_err(|_| format!("{item}: a probability is a number"))?;
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{item}: a probability lies in 0..=1"));
            }
            match k {
                "loss" => f.loss = p,
                "dup" => f.dup = p,
                "reorder" => f.reorder = p,
                "delay" => f.delay = p,
                _ => return Err(format!("{item}: unknown fault (loss, dup, reorder, delay, seed)")),
            }
        }
        // splitmix64 of the seed: a zero seed still gives a working xorshift state.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        f.state = (z ^ (z >> 31)) | 1;
        Ok(f)
    }

    /// The faults `SOFT_MLX5_FAULTS` asks for (None: a perfect wire). A value that does not
    /// parse is reported on stderr and ignored. With faults, the process tells at exit what
    /// it injected ([`Tally`]).
    pub fn from_env() -> Option<Faults> {
        let spec = std::env::var("SOFT_MLX5_FAULTS").ok()?;
        match Faults::parse(&spec) {
            Ok(f) => {
                Tally::report_at_exit();
                Some(f)
            }
            Err(e) => {
                eprintln!("soft-mlx5 (emulated): SOFT_MLX5_FAULTS ignored: {e}");
                None
            }
        }
    }

    /// A uniform draw in [0, 1) (xorshift64*).
    fn draw(&mut self) -> f64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        let x = self.state.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Draws the fate of the next message (counted in the process's [`Tally`]).
    pub fn fate(&mut self) -> Fate {
        let (loss, dup, reorder, delay) = (self.loss, self.dup, self.reorder, self.delay);
        let (fate, count) = if self.draw() < loss {
            (Fate::Lose, &TALLY.lost)
        } else if self.draw() < dup {
            (Fate::Duplicate, &TALLY.duplicated)
        } else if self.draw() < reorder {
            (Fate::Hold(REORDER_HOLD), &TALLY.reordered)
        } else if self.draw() < delay {
            (Fate::Hold(DELAY_HOLD), &TALLY.delayed)
        } else {
            (Fate::Deliver, &TALLY.delivered)
        };
        count.fetch_add(1, Ordering::Relaxed);
        fate
    }
}

/// What this process's lossy wire did to the messages its devices sent (requests and their
/// answers), told on stderr at exit (`soft-mlx5 (emulated): node N (pid P): the lossy wire
/// lost ..., duplicated ..., reordered ..., delayed ... of M messages`), so a lossy run shows
/// that its faults happened, and how many.
pub struct Tally {
    lost: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    delayed: AtomicU64,
    delivered: AtomicU64,
}

static TALLY: Tally = Tally {
    lost: AtomicU64::new(0),
    duplicated: AtomicU64::new(0),
    reordered: AtomicU64::new(0),
    delayed: AtomicU64::new(0),
    delivered: AtomicU64::new(0),
};

impl Tally {
    /// The counts so far: lost, duplicated, reordered, delayed, and every message drawn.
    pub fn counts() -> [u64; 5] {
        let t = &TALLY;
        let c = [&t.lost, &t.duplicated, &t.reordered, &t.delayed, &t.delivered].map(|a| a.load(Ordering::Relaxed));
        [c[0], c[1], c[2], c[3], c.iter().sum()]
    }

    /// The line told at exit.
    pub fn line() -> String {
        let [lost, dup, reordered, delayed, all] = Tally::counts();
        let node = std::env::var("SOFT_MLX5_NODE").unwrap_or_else(|_| "0".into());
        format!(
            "soft-mlx5 (emulated): node {node} (pid {}): the lossy wire (SOFT_MLX5_FAULTS) lost {lost}, duplicated {dup}, reordered {reordered}, delayed {delayed} of {all} messages",
            std::process::id()
        )
    }

    /// Registers the exit report, once a process.
    fn report_at_exit() {
        static ONCE: Once = Once::new();
        extern "C" fn report() {
            eprintln!("{}", Tally::line());
        }
        ONCE.call_once(|| {
            // SAFETY: `report` is a plain function of this library, which stays loaded until
            // exit (an LD_PRELOAD library is never unloaded).
            unsafe { libc::atexit(report) };
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_parses_and_the_same_seed_draws_the_same_fates() {
        let mut a = Faults::parse("loss=0.2,dup=0.1,reorder=0.1,delay=0.1,seed=7").unwrap();
        let mut b = a.clone();
        let fa: Vec<Fate> = (0..200).map(|_| a.fate()).collect();
        let fb: Vec<Fate> = (0..200).map(|_| b.fate()).collect();
        assert_eq!(fa, fb);
        let lost = fa.iter().filter(|f| **f == Fate::Lose).count();
        assert!((20..=60).contains(&lost), "{lost} of 200 lost at 20%");
        assert!(Faults::parse("loss=2").is_err());
        assert!(Faults::parse("jitter=0.1").is_err());
        assert!(Faults::parse("loss").is_err());
    }
}
