//! Property tests of the interval laws and the line index against plain sets of atoms.

use std::collections::BTreeSet;

use ctxeval_core::{ByteRanges, LineIndex, LineRanges};
use proptest::prelude::*;

fn atoms(r: &ByteRanges) -> BTreeSet<u64> {
    r.spans().iter().flat_map(|&(a, b)| a..b).collect()
}

fn raw_atoms(pairs: &[(u64, u64)]) -> BTreeSet<u64> {
    pairs
        .iter()
        .flat_map(|&(a, b)| a.min(b)..a.max(b))
        .collect()
}

fn canonical(r: &ByteRanges) -> bool {
    r.spans().iter().all(|(a, b)| a < b) && r.spans().windows(2).all(|w| w[0].1 < w[1].0)
}

fn pairs() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0u64..200, 0u64..200), 0..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn normalise_keeps_atoms(a in pairs()) {
        let r = ByteRanges::from_ranges(a.clone());
        prop_assert!(canonical(&r));
        prop_assert_eq!(atoms(&r), raw_atoms(&a));
        prop_assert_eq!(r.measure(), raw_atoms(&a).len() as u64);
    }

    #[test]
    fn union_intersection_difference(a in pairs(), b in pairs()) {
        let (ra, rb) = (ByteRanges::from_ranges(a.clone()), ByteRanges::from_ranges(b.clone()));
        let (sa, sb) = (raw_atoms(&a), raw_atoms(&b));
        let u = ra.union(&rb);
        let i = ra.intersection(&rb);
        let d = ra.difference(&rb);
        prop_assert!(canonical(&u) && canonical(&i) && canonical(&d));
        prop_assert_eq!(atoms(&u), &sa | &sb);
        prop_assert_eq!(atoms(&i), &sa & &sb);
        prop_assert_eq!(atoms(&d), &sa - &sb);
        prop_assert_eq!(ra.intersection_measure(&rb), i.measure());
        // measure(A ∪ B) + measure(A ∩ B) = measure(A) + measure(B)
        prop_assert_eq!(u.measure() + i.measure(), ra.measure() + rb.measure());
        // commutativity
        prop_assert_eq!(u, rb.union(&ra));
        prop_assert_eq!(i, rb.intersection(&ra));
    }

    #[test]
    fn insert_equals_union(a in pairs(), b in pairs()) {
        let mut r = ByteRanges::from_ranges(a.clone());
        for &(x, y) in &b {
            r.insert(x, y);
        }
        prop_assert!(canonical(&r));
        prop_assert_eq!(r, ByteRanges::from_ranges(a.into_iter().chain(b)));
    }

    #[test]
    fn union_with_is_union(a in pairs(), b in pairs()) {
        let ra = ByteRanges::from_ranges(a);
        let rb = ByteRanges::from_ranges(b);
        let mut x = ra.clone();
        x.union_with(&rb);
        prop_assert_eq!(x, ra.union(&rb));
    }

    #[test]
    fn overlap_matches_atoms(a in pairs(), s in 0u64..200, len in 1u64..30) {
        let r = ByteRanges::from_ranges(a);
        let set = atoms(&r);
        let e = s + len;
        prop_assert_eq!(r.overlaps(s, e, false), (s..e).any(|x| set.contains(&x)));
        prop_assert_eq!(r.overlaps(s, e, true), (s..=e).any(|x| set.contains(&x)));
    }

    #[test]
    fn inclusive_lines(a in prop::collection::vec((0u32..80, 0u32..80), 0..8)) {
        let r = LineRanges::from_inclusive(a.clone());
        let want: BTreeSet<u32> =
            a.iter().flat_map(|&(x, y)| x.min(y).max(1)..=x.max(y)).collect();
        let got: BTreeSet<u32> = r.inclusive().flat_map(|(x, y)| x..=y).collect();
        prop_assert_eq!(got, want.clone());
        prop_assert_eq!(r.measure(), want.len() as u64);
    }

    #[test]
    fn line_index_round_trip(lines in prop::collection::vec(("[ab é]{0,5}", prop::bool::ANY), 0..10),
                             drop_nl in prop::bool::ANY) {
        let mut text = String::new();
        for (t, crlf) in &lines {
            text.push_str(t);
            text.push_str(if *crlf { "\r\n" } else { "\n" });
        }
        if drop_nl && !lines.is_empty() {
            let cut = if lines.last().unwrap().1 { 2 } else { 1 };
            text.truncate(text.len() - cut);
        }
        let data = text.as_bytes();
        let ix = LineIndex::new(data);
        // lines tile the file exactly, each ending in a newline except possibly the last
        let mut pos = 0;
        for k in 1..=ix.line_count() {
            let (a, b) = ix.line_bytes(k).unwrap();
            prop_assert_eq!(a, pos);
            prop_assert!(b > a);
            let last = k == ix.line_count();
            prop_assert!(data[b as usize - 1] == b'\n' || last);
            for x in a..b {
                prop_assert_eq!(ix.line_of(x), Some(k));
            }
            pos = b;
        }
        prop_assert_eq!(pos, data.len() as u64);
        prop_assert_eq!(ix.line_of(pos), None);
    }
}
