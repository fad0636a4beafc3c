//! The start-up deadline and its length: every wait of joining a job (the launcher's
//! channel, a PMI reply, a neighbor's dial) is bounded by what is left of one [`Deadline`].

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::wire::control;

/// The start-up deadline: when it ends and how long it was (for the error message). Every
/// wait of start-up — the launcher's channel, a PMI reply, a neighbor's dial — is bounded
/// by what is left of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    limit: Duration,
}

impl Deadline {
    /// A deadline `limit` from now.
    pub fn start(limit: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + limit,
            limit,
        }
    }

    /// Time left, or the timeout error naming the stage.
    pub fn left(&self, stage: &str) -> Result<Duration> {
        let now = Instant::now();
        if now >= self.at {
            return Err(self.expired(stage));
        }
        Ok(self.at - now)
    }

    /// The timeout error for `stage`.
    pub fn expired(&self, stage: impl Into<String>) -> Error {
        Error::BootstrapTimeout {
            stage: stage.into(),
            timeout_ms: self.limit.as_millis() as u64,
        }
    }
}

/// The start-up timeout: `HYPERCUBE_BOOT_TIMEOUT_MS`, else 30 s.
pub(crate) fn boot_timeout() -> Result<Duration> {
    match std::env::var(control::ENV_BOOT_TIMEOUT_MS) {
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| {
                Error::Config(format!(
                    "{}={v:?} is not a number of milliseconds",
                    control::ENV_BOOT_TIMEOUT_MS
                ))
            }),
        Err(_) => Ok(Duration::from_secs(30)),
    }
}
