//! [`RecoveredData`]: the message an error hands back.

use bytes::Bytes;

/// A whole message handed back inside an error, so that nothing is lost when it did not fit
/// the caller's buffer (GRECVW, GCAT, SPGRCW). Its `Debug` shows only the length.
#[derive(Clone, PartialEq, Eq)]
pub struct RecoveredData(pub(crate) Bytes);

impl RecoveredData {
    /// The complete message.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }
    /// Take the complete message.
    pub fn into_bytes(self) -> Bytes {
        self.0
    }
    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True for an empty message.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for RecoveredData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RecoveredData(<{} bytes>)", self.0.len())
    }
}
