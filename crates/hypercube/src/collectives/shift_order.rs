//! The two orders a circular shift (`shift/`) may follow: relative rank, or the Gray-code
//! ring. A parameter of the public API (`collectives::ShiftOrder`), so it stands beside the
//! other types of the API (`Op`, `Pod`, `Algorithm`), below the operations that take it.

use hypercube_topology::{ginv, gray};

/// The order of the subcube's nodes a circular shift follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftOrder {
    /// Relative rank order: rank x sends to rank x + q (mod p).
    Rank,
    /// The Gray-code ring (the book's linear-array-to-hypercube mapping, §4.6.2): ring
    /// position j (node `gray(j)`) sends to position j + q (mod p).
    Ring,
}

impl ShiftOrder {
    /// The index of relative rank `x` in this order.
    pub(crate) fn index(self, x: u32) -> u32 {
        match self {
            ShiftOrder::Rank => x,
            ShiftOrder::Ring => ginv(x),
        }
    }

    /// The relative rank at index `i`.
    pub(crate) fn node(self, i: u32) -> u32 {
        match self {
            ShiftOrder::Rank => i,
            ShiftOrder::Ring => gray(i),
        }
    }
}
