use std::ops::RangeInclusive;

use super::*;

/// Every range of the layout, in the order of the module doc's table.
fn layout() -> [(&'static str, RangeInclusive<u32>); 9] {
    [
        ("user types", USER),
        ("collectives", COLLECTIVE),
        ("spare", SPARE),
        ("bootstrap", BOOTSTRAP),
        ("trace", TRACE),
        ("control", CONTROL),
        ("sparse send", Keyed::Sparse.range()),
        ("long data", Keyed::LongData.range()),
        ("long header", Keyed::LongHeader.range()),
    ]
}

/// The names of the ranges that hold `tag`.
fn owners(tag: u32) -> Vec<&'static str> {
    layout()
        .into_iter()
        .filter(|(_, r)| r.contains(&tag))
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn layout_covers_the_tag_space_without_overlap() {
    let layout = layout();
    // First and last tag of each range, as the module doc's table states them.
    let table = [
        (0x0000_0000, 0x7FFF_FFFF),
        (0x8000_0000, 0xC3FF_FFFF),
        (0xC400_0000, 0xE7FF_FFFF),
        (0xE800_0000, 0xEBFF_FFFF),
        (0xEC00_0000, 0xEFFF_FFFF),
        (0xF000_0000, 0xF3FF_FFFF),
        (0xF400_0000, 0xF7FF_FFFF),
        (0xF800_0000, 0xFBFF_FFFF),
        (0xFC00_0000, 0xFFFF_FFFF),
    ];
    let edges: Vec<(u32, u32)> = layout.iter().map(|(_, r)| (*r.start(), *r.end())).collect();
    assert_eq!(
        edges, table,
        "the ranges differ from the module doc's table"
    );
    // No two ranges overlap: each one's edges lie in no other range.
    for (i, (a, ra)) in layout.iter().enumerate() {
        assert!(ra.start() <= ra.end(), "{a} is empty");
        for (b, rb) in layout.iter().skip(i + 1) {
            let apart = ra.end() < rb.start() || rb.end() < ra.start();
            assert!(apart, "{a} {ra:#x?} overlaps {b} {rb:#x?}");
        }
        for edge in [*ra.start(), *ra.end()] {
            assert_eq!(owners(edge), [*a], "tag {edge:#x}");
        }
    }
    // Together they cover every tag: they start at 0, each begins right after the one
    // before ends, and the last ends at u32::MAX.
    assert_eq!(*layout[0].1.start(), 0);
    for w in layout.windows(2) {
        assert_eq!(
            *w[0].1.end() as u64 + 1,
            *w[1].1.start() as u64,
            "{} / {}",
            w[0].0,
            w[1].0
        );
    }
    assert_eq!(*layout[layout.len() - 1].1.end(), u32::MAX);
}

#[test]
fn every_tag_falls_in_its_own_range() {
    // User types: exactly 0..=MAX_USER_TYPE.
    assert_eq!(owners(0), ["user types"]);
    assert_eq!(owners(MAX_USER_TYPE), ["user types"]);
    assert_eq!(owners(MAX_USER_TYPE + 1), ["collectives"]);

    // Collectives: first and last dimension, first and last counter; the counter wraps
    // and the dimension is the slot.
    assert_eq!(collective(0, 0), *COLLECTIVE.start());
    assert_eq!(collective(MAX_DIM, LOW_MASK), *COLLECTIVE.end());
    for dim in [0, 1, MAX_DIM - 1, MAX_DIM] {
        for counter in [0, 1, LOW_MASK, LOW_MASK + 1, u32::MAX] {
            let t = collective(dim, counter);
            assert_eq!(owners(t), ["collectives"], "dim {dim}, call {counter}");
            assert_eq!((t >> LOW_BITS) & 0x1F, dim);
            assert_eq!(t & LOW_MASK, counter & LOW_MASK);
        }
    }

    // Type-keyed: types 0..=MAX_RESERVED_USER_TYPE fill the slot, larger ones have no tag.
    for (name, slot) in [
        ("sparse send", Keyed::Sparse),
        ("long data", Keyed::LongData),
        ("long header", Keyed::LongHeader),
    ] {
        assert_eq!(keyed(slot, 0), Some(*slot.range().start()));
        assert_eq!(
            keyed(slot, MAX_RESERVED_USER_TYPE),
            Some(*slot.range().end())
        );
        assert_eq!(owners(keyed(slot, 0x03FF_FFF0).unwrap()), [name]);
        assert_eq!(keyed(slot, MAX_RESERVED_USER_TYPE + 1), None);
        assert_eq!(keyed(slot, MAX_USER_TYPE), None);
    }

    // Finalize is a control tag and nothing else: no user type keys to it.
    assert_eq!(owners(FINALIZE), ["control"]);
}
