//! The bytes of one outgoing message, in one or more parts, and what can become them
//! ([`IntoPayload`]).
//!
//! A message made of several buffers — the blocks a collective forwards, a header and a
//! body — is sent as they are, with one gather write (`sendmsg`), instead of being copied
//! into one buffer first. The receiver gets one contiguous message either way.

use bytes::{Bytes, BytesMut};

/// The payload of one message: one buffer, or several sent back to back. Cloning and
/// slicing share the buffers (no copy).
///
/// ```
/// use bytes::Bytes;
/// use hypercube::Parts;
///
/// let p = Parts::from(vec![Bytes::from_static(b"head"), Bytes::from_static(b"body")]);
/// assert_eq!(p.len(), 8);
/// assert_eq!(p.slice(2..6).into_bytes(), Bytes::from_static(b"adbo"));
/// assert_eq!(p.into_bytes(), Bytes::from_static(b"headbody"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parts {
    /// One buffer.
    One(Bytes),
    /// Several buffers, in order.
    Many(Vec<Bytes>),
}

impl Default for Parts {
    fn default() -> Self {
        Parts::One(Bytes::new())
    }
}

impl Parts {
    /// Total length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Parts::One(b) => b.len(),
            Parts::Many(v) => v.iter().map(Bytes::len).sum(),
        }
    }

    /// No bytes at all?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffers, in order (empty ones included).
    pub fn iter(&self) -> impl Iterator<Item = &Bytes> {
        let (one, many) = match self {
            Parts::One(b) => (Some(b), &[][..]),
            Parts::Many(v) => (None, &v[..]),
        };
        one.into_iter().chain(many.iter())
    }

    /// The bytes `range` of the message, sharing the buffers.
    ///
    /// # Panics
    /// If the range is out of bounds (as [`Bytes::slice`]).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Parts {
        assert!(
            range.start <= range.end && range.end <= self.len(),
            "Parts::slice: range {range:?} out of bounds for {} bytes",
            self.len()
        );
        match self {
            Parts::One(b) => Parts::One(b.slice(range)),
            Parts::Many(v) => {
                let mut out = Vec::new();
                let mut at = 0;
                for b in v {
                    let (lo, hi) = (at, at + b.len());
                    at = hi;
                    if hi <= range.start || b.is_empty() {
                        continue;
                    }
                    if lo >= range.end {
                        break;
                    }
                    let s = range.start.max(lo) - lo;
                    let e = range.end.min(hi) - lo;
                    out.push(b.slice(s..e));
                }
                Parts::from(out)
            }
        }
    }

    /// Add `b` after the last part (no copy).
    pub(crate) fn push(&mut self, b: Bytes) {
        if b.is_empty() {
            return;
        }
        match self {
            Parts::One(a) if a.is_empty() => *a = b,
            Parts::One(a) => {
                let a = std::mem::take(a);
                *self = Parts::Many(vec![a, b]);
            }
            Parts::Many(v) => v.push(b),
        }
    }

    /// One contiguous buffer: free for one part, a copy for several.
    pub fn into_bytes(self) -> Bytes {
        match self {
            Parts::One(b) => b,
            Parts::Many(mut v) if v.len() == 1 => v.pop().unwrap_or_default(),
            Parts::Many(v) => {
                let mut out = BytesMut::with_capacity(v.iter().map(Bytes::len).sum());
                for b in &v {
                    out.extend_from_slice(b);
                }
                out.freeze()
            }
        }
    }
}

impl From<Bytes> for Parts {
    fn from(b: Bytes) -> Parts {
        Parts::One(b)
    }
}

impl From<Vec<Bytes>> for Parts {
    fn from(mut v: Vec<Bytes>) -> Parts {
        match v.len() {
            0 => Parts::default(),
            1 => Parts::One(v.pop().unwrap_or_default()),
            _ => Parts::Many(v),
        }
    }
}

/// Something that can be sent as a message payload. `Bytes`, `BytesMut`, `Vec<u8>` and
/// `String` move in without a copy; borrowed slices are copied once. [`Parts`] is sent as
/// its buffers back to back, without joining them (one gather write); the receiver gets
/// one contiguous message.
pub trait IntoPayload: Sized {
    /// Convert into shared bytes (several parts are joined with a copy).
    fn into_payload(self) -> Bytes;
    /// Convert into the parts to send (the default: [`IntoPayload::into_payload`]'s one
    /// buffer).
    fn into_parts(self) -> Parts {
        Parts::One(self.into_payload())
    }
}

impl IntoPayload for Parts {
    fn into_payload(self) -> Bytes {
        self.into_bytes()
    }
    fn into_parts(self) -> Parts {
        self
    }
}

impl IntoPayload for Bytes {
    fn into_payload(self) -> Bytes {
        self
    }
}
impl IntoPayload for BytesMut {
    fn into_payload(self) -> Bytes {
        self.freeze()
    }
}
impl IntoPayload for Vec<u8> {
    fn into_payload(self) -> Bytes {
        Bytes::from(self)
    }
}
impl IntoPayload for String {
    fn into_payload(self) -> Bytes {
        Bytes::from(self)
    }
}
impl IntoPayload for &[u8] {
    fn into_payload(self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
}
impl<const N: usize> IntoPayload for &[u8; N] {
    fn into_payload(self) -> Bytes {
        Bytes::copy_from_slice(self)
    }
}
impl IntoPayload for &str {
    fn into_payload(self) -> Bytes {
        Bytes::copy_from_slice(self.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn many() -> Parts {
        Parts::from(vec![
            Bytes::from_static(b"ab"),
            Bytes::new(),
            Bytes::from_static(b"cde"),
            Bytes::from_static(b"f"),
        ])
    }

    #[test]
    fn slices_across_parts() {
        let p = many();
        assert_eq!(p.len(), 6);
        for s in 0..=6 {
            for e in s..=6 {
                assert_eq!(
                    p.slice(s..e).into_bytes(),
                    Bytes::from_static(b"abcdef").slice(s..e)
                );
                assert_eq!(p.slice(s..e).len(), e - s);
            }
        }
    }

    #[test]
    fn one_part_stays_one() {
        assert!(matches!(
            Parts::from(vec![Bytes::from_static(b"x")]),
            Parts::One(_)
        ));
        assert!(Parts::from(Vec::new()).is_empty());
        assert_eq!(many().iter().count(), 4);
    }

    #[test]
    #[should_panic(expected = "out of bounds")]
    fn slice_out_of_bounds_panics() {
        drop(many().slice(3..7));
    }
}
