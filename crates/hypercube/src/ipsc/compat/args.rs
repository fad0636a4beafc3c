//! The seed's integer arguments (`i32`, `i64`) checked and converted, and counts handed
//! back as the seed's `i32`.

use crate::error::{Error, Result};

/// A non-negative seed integer as `u32`, or an argument error naming it.
pub(super) fn nonneg(routine: &'static str, name: &str, v: i32) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::IpscArgument {
        routine,
        detail: format!("{name} = {v} is negative; pass a value of at least 0"),
    })
}

/// A length `len` that must fit a buffer of `cap` bytes.
pub(super) fn length(routine: &'static str, name: &str, len: i64, cap: usize) -> Result<usize> {
    match usize::try_from(len) {
        Ok(n) if n <= cap => Ok(n),
        _ => Err(Error::IpscArgument {
            routine,
            detail: format!(
                "{name} = {len} is not in 0..={cap} (the buffer's length); pass a length the \
                 buffer holds"
            ),
        }),
    }
}

pub(super) fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
