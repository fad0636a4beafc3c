//! The suite's data and references: deterministic pseudo-random payloads every member
//! derives alike, and the sequential folds the reductions are checked against.

use bytes::Bytes;

/// Deterministic pseudo-random numbers (splitmix64).
pub(super) fn rnd(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` pseudo-random bytes, eight from each number.
pub(super) fn bytes_of(seed: u64, len: usize) -> Bytes {
    let s = seed.wrapping_mul(1000);
    let mut v: Vec<u8> = (0..len.div_ceil(8) as u64)
        .flat_map(|i| rnd(s.wrapping_add(i)).to_le_bytes())
        .collect();
    v.truncate(len);
    v.into()
}

pub(super) fn vec_i64(seed: u64, n: usize) -> Vec<i64> {
    let s = seed.wrapping_mul(7919);
    (0..n)
        .map(|i| (rnd(s.wrapping_add(i as u64)) % 1000) as i64 - 500)
        .collect()
}

pub(super) fn vec_f64(seed: u64, n: usize) -> Vec<f64> {
    let s = seed.wrapping_mul(31);
    (0..n)
        .map(|i| (rnd(s.wrapping_add(i as u64)) % 10_000) as f64 / 7.0)
        .collect()
}

/// Affine maps x ↦ a·x + b (mod 2^32) packed as (a << 32) | b; composition "first the left
/// operand, then the right" is associative but not commutative.
pub(super) fn affine(l: u64, r: u64) -> u64 {
    let (a1, b1) = (l >> 32, l & 0xFFFF_FFFF);
    let (a2, b2) = (r >> 32, r & 0xFFFF_FFFF);
    ((a1.wrapping_mul(a2) & 0xFFFF_FFFF) << 32)
        | (a2.wrapping_mul(b1).wrapping_add(b2) & 0xFFFF_FFFF)
}

pub(super) fn vec_affine(seed: u64, n: usize) -> Vec<u64> {
    let s = seed.wrapping_mul(131);
    (0..n)
        .map(|i| rnd(s.wrapping_add(i as u64)) | (1 << 32))
        .collect()
}

/// `period` repeated up to `n` elements.
pub(super) fn repeat<T: Copy>(period: &[T], n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n + period.len());
    while v.len() < n && !period.is_empty() {
        v.extend_from_slice(period);
    }
    v.truncate(n);
    v
}

/// A long payload: pseudo-random bytes with a prime period of 4093, cheap to make on every
/// node (a shifted or misplaced part still differs).
pub(super) fn long_bytes(seed: u64, len: usize) -> Bytes {
    repeat(&bytes_of(seed, 4093), len).into()
}

/// The element-wise fold of `gen(0), gen(1), …, gen(upto - 1)` (`None` when `upto` = 0),
/// generating one vector at a time.
pub(super) fn fold_upto<T: Copy>(
    upto: usize,
    gen: impl Fn(usize) -> Vec<T>,
    f: impl Fn(T, T) -> T,
) -> Option<Vec<T>> {
    let mut acc: Option<Vec<T>> = None;
    for r in 0..upto {
        let x = gen(r);
        acc = Some(match acc {
            None => x,
            Some(mut a) => {
                combine(&mut a, &x, &f);
                a
            }
        });
    }
    acc
}

/// `acc[i] = f(acc[i], x[i])`.
pub(super) fn combine<T: Copy>(acc: &mut [T], x: &[T], f: impl Fn(T, T) -> T) {
    for (a, &b) in acc.iter_mut().zip(x) {
        *a = f(*a, b);
    }
}

/// Part `j` of `n` elements split over `p` members.
pub(super) fn part(n: usize, p: usize, j: usize) -> std::ops::Range<usize> {
    (j * n / p)..((j + 1) * n / p)
}
