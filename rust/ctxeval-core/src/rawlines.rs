//! Line arithmetic as the ContextBench reference does it, for the `contextbench` preset.
//!
//! The reference merges inclusive `(start, end)` pairs exactly as given: reversed pairs are not
//! swapped, so a reversed range has a negative length and merges by its (smaller) end. Sizes can
//! therefore be negative. These functions follow its steps in the same order so that its
//! numbers come out; nothing else in ctxeval uses them.

/// Inclusive, possibly reversed line pairs of one file.
pub type RawRanges = Vec<(i64, i64)>;

/// Sort and merge overlapping or adjacent pairs (`next.start <= last.end + 1`).
pub fn merge(intervals: &[(i64, i64)]) -> RawRanges {
    let mut sorted = intervals.to_vec();
    sorted.sort_unstable();
    let mut out: RawRanges = Vec::with_capacity(sorted.len());
    for cur in sorted {
        match out.last_mut() {
            Some(last) if cur.0 <= last.1 + 1 => last.1 = last.1.max(cur.1),
            _ => out.push(cur),
        }
    }
    out
}

/// Σ (end - start + 1) over the merged pairs.
pub fn length(intervals: &[(i64, i64)]) -> i64 {
    merge(intervals).iter().map(|&(a, b)| b - a + 1).sum()
}

/// The reference's two-pointer intersection of the merged inputs.
pub fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> RawRanges {
    let (am, bm) = (merge(a), merge(b));
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < am.len() && j < bm.len() {
        let lo = am[i].0.max(bm[j].0);
        let hi = am[i].1.min(bm[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        match am[i].1.cmp(&bm[j].1) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    out
}

pub fn intersect_size(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    length(&intersect(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reversed_ranges_have_negative_length() {
        assert_eq!(length(&[(10, 5)]), -4);
        assert_eq!(merge(&[(10, 5), (6, 8)]), vec![(6, 8), (10, 5)]);
        assert_eq!(length(&[(1, 3), (2, 6), (8, 8)]), 7);
    }

    #[test]
    fn intersection_like_the_reference() {
        assert_eq!(intersect(&[(1, 10)], &[(5, 20), (30, 40)]), vec![(5, 10)]);
        assert_eq!(intersect_size(&[(1, 10), (20, 25)], &[(5, 22)]), 9);
        assert_eq!(intersect_size(&[(10, 5)], &[(1, 20)]), 0);
    }
}
