//! Test support for the fuzzed decoders (compiled for tests only): the case count and the
//! mutations applied to valid encodings. Used by the unit tests of the `wire` modules and
//! of the link reader, and by `tests/fuzz_decoders.rs`, which includes this file by path.
//!
//! `HYPERCUBE_FUZZ_CASES` sets the proptest cases per property (default [`DEFAULT_CASES`],
//! the short run); `docs/reliability.md` gives the long run.

use proptest::prelude::*;
use proptest::test_runner::Config;

/// Environment variable: proptest cases per fuzz property.
pub(crate) const ENV_CASES: &str = "HYPERCUBE_FUZZ_CASES";

/// Cases per property when [`ENV_CASES`] is not set (the short run of every `cargo test`).
pub(crate) const DEFAULT_CASES: u32 = 1000;

/// Cases per property: [`ENV_CASES`] if set (underscores allowed: `1_000_000`), else
/// [`DEFAULT_CASES`]. A value that is not a number stops the test rather than being ignored.
pub(crate) fn cases() -> u32 {
    match std::env::var(ENV_CASES) {
        Ok(v) => v
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{ENV_CASES}={v:?} is not a number of cases")),
        Err(_) => DEFAULT_CASES,
    }
}

/// The proptest configuration of a fuzz property: [`cases`] cases, the rest as proptest's
/// defaults (failures are saved under `proptest-regressions/` and replayed first).
pub(crate) fn config() -> Config {
    Config {
        cases: cases(),
        ..Config::default()
    }
}

/// [`cases`] divided by `by`, at least 1: for properties whose cases cost more than most (each
/// one spawns a thread or opens sockets), so the short run stays short.
pub(crate) fn config_div(by: u32) -> Config {
    Config {
        cases: (cases() / by).max(1),
        ..Config::default()
    }
}

/// One edit of an encoding. Positions are taken modulo the length at the time of the edit,
/// so any edit applies to any input.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    /// Flip one bit.
    Flip(usize),
    /// Overwrite one byte.
    Byte(usize, u8),
    /// Keep the first `n` bytes.
    Truncate(usize),
    /// Append bytes.
    Extend(Vec<u8>),
    /// Insert bytes.
    Insert(usize, Vec<u8>),
    /// Remove up to `n` bytes from a position.
    Remove(usize, usize),
    /// Overwrite a 4-byte (`wide`: 8-byte) little-endian field, as a length or count would
    /// be, with a value chosen to hurt (0, 1, 2^31, 2^32 − 1, 2^64 − 1, ...).
    Field {
        /// Where the field starts.
        at: usize,
        /// 8 bytes rather than 4.
        wide: bool,
        /// The value written (its low 4 bytes when not wide).
        value: u64,
    },
}

/// Values that break length and count fields.
pub(crate) fn extreme() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(0x7fff_ffff),
        Just(0x8000_0000),
        Just(u32::MAX as u64),
        Just(1 << 32),
        Just(1 << 60),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        0u64..4096,
        any::<u64>(),
    ]
}

/// One mutation, length-field overwrites weighted up.
pub(crate) fn mutation() -> impl Strategy<Value = Mutation> {
    let some_bytes = || prop::collection::vec(any::<u8>(), 1..16);
    prop_oneof![
        3 => any::<usize>().prop_map(Mutation::Flip),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Byte(i, b)),
        2 => any::<usize>().prop_map(Mutation::Truncate),
        1 => some_bytes().prop_map(Mutation::Extend),
        1 => (any::<usize>(), some_bytes()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<usize>(), 1usize..16).prop_map(|(i, n)| Mutation::Remove(i, n)),
        3 => (any::<usize>(), any::<bool>(), extreme())
            .prop_map(|(at, wide, value)| Mutation::Field { at, wide, value }),
    ]
}

/// One to four mutations.
pub(crate) fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(mutation(), 1..=4)
}

/// Random bytes, up to `max` of them.
pub(crate) fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..=max)
}

/// Apply mutations in order.
pub(crate) fn apply(bytes: &mut Vec<u8>, muts: &[Mutation]) {
    for m in muts {
        let len = bytes.len();
        match m {
            Mutation::Flip(i) if len > 0 => {
                let bit = i % (len * 8);
                bytes[bit / 8] ^= 1 << (bit % 8);
            }
            Mutation::Byte(i, b) if len > 0 => bytes[i % len] = *b,
            Mutation::Truncate(n) => bytes.truncate(n % (len + 1)),
            Mutation::Extend(x) => bytes.extend_from_slice(x),
            Mutation::Insert(i, x) => {
                let at = i % (len + 1);
                bytes.splice(at..at, x.iter().copied());
            }
            Mutation::Remove(i, n) if len > 0 => {
                let at = i % len;
                bytes.drain(at..(at + n).min(len));
            }
            Mutation::Field { at, wide, value } if len > 0 => {
                let at = at % len;
                let end = (at + if *wide { 8 } else { 4 }).min(len);
                bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
            }
            _ => {}
        }
    }
}

/// `bytes` with `muts` applied.
pub(crate) fn mutated(bytes: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    apply(&mut b, muts);
    b
}
