//! Finding a cycle of large sends in a deadlock report.

/// A cycle of ranks each blocked in a large (rendezvous) send to the next, found in the
/// deadlock report's "rank N waits for ..." lines (the ranks word such a wait with
/// `hypercube::wire::control::large_send_text`); the ranks in cycle order, starting with
/// the smallest, or `None`.
pub fn send_cycle(waits: &[String]) -> Option<Vec<u32>> {
    use std::collections::BTreeMap;
    let edges: BTreeMap<u32, Vec<u32>> = waits
        .iter()
        .filter_map(|w| {
            let rest = w.strip_prefix("rank ")?;
            let (rank, what) = rest.split_once(" waits for ")?;
            let dests = hypercube::wire::control::large_send_dests(what);
            (!dests.is_empty()).then(|| Some((rank.parse().ok()?, dests)))?
        })
        .collect();
    // Depth-first from each rank in order; a rank met again on the current path closes a
    // cycle. Bounded: each rank is entered at most once per start.
    for &start in edges.keys() {
        let mut path = vec![start];
        let mut next = vec![0usize];
        while let (Some(&at), Some(i)) = (path.last(), next.last_mut()) {
            let Some(&to) = edges.get(&at).and_then(|d| d.get(*i)) else {
                path.pop();
                next.pop();
                continue;
            };
            *i += 1;
            if let Some(k) = path.iter().position(|&r| r == to) {
                let mut cycle = path[k..].to_vec();
                let m = (0..cycle.len()).min_by_key(|&j| cycle[j]).unwrap_or(0);
                cycle.rotate_left(m);
                return Some(cycle);
            }
            if edges.contains_key(&to) && path.len() < edges.len() {
                path.push(to);
                next.push(0);
            }
        }
    }
    None
}
