//! Interval algebra over line and byte coordinates.
//!
//! A [`RangeSet`] is a sorted list of disjoint, non-adjacent half-open ranges `[start, end)`.
//! Keeping the set normalised at all times makes union, intersection and difference linear
//! merges and measure a plain sum, which is what the per-step metrics need on long trajectories.
//!
//! Lines are 1-based and inclusive at the API boundary ([`LineRanges::from_inclusive`]);
//! internally `[a, b]` is stored as `[a, b + 1)`, so adjacent line ranges merge like byte ranges.

use std::fmt::Debug;

/// A coordinate type: `u32` for lines, `u64` for bytes.
pub trait Coord: Copy + Ord + Debug + Default {
    /// `b - a` as `u64`, for `a <= b`.
    fn span(a: Self, b: Self) -> u64;
}

impl Coord for u32 {
    #[inline]
    fn span(a: Self, b: Self) -> u64 {
        u64::from(b - a)
    }
}

impl Coord for u64 {
    #[inline]
    fn span(a: Self, b: Self) -> u64 {
        b - a
    }
}

/// A normalised set of half-open ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet<T: Coord> {
    spans: Vec<(T, T)>,
}

pub type ByteRanges = RangeSet<u64>;
pub type LineRanges = RangeSet<u32>;

impl<T: Coord> RangeSet<T> {
    pub fn new() -> Self {
        Self { spans: Vec::new() }
    }

    /// Normalise arbitrary half-open ranges: reversed ranges are swapped, empty ones dropped,
    /// overlapping and adjacent ones merged.
    pub fn from_ranges<I: IntoIterator<Item = (T, T)>>(ranges: I) -> Self {
        let mut spans: Vec<(T, T)> = ranges
            .into_iter()
            .map(|(a, b)| if a <= b { (a, b) } else { (b, a) })
            .filter(|(a, b)| a < b)
            .collect();
        spans.sort_unstable();
        Self {
            spans: merge_sorted(spans),
        }
    }

    /// Build from ranges already sorted, disjoint and non-adjacent (checked in debug builds).
    pub fn from_normalised(spans: Vec<(T, T)>) -> Self {
        debug_assert!(spans.iter().all(|(a, b)| a < b));
        debug_assert!(spans.windows(2).all(|w| w[0].1 < w[1].0));
        Self { spans }
    }

    pub fn spans(&self) -> &[(T, T)] {
        &self.spans
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Total length of the set.
    pub fn measure(&self) -> u64 {
        self.spans.iter().map(|&(a, b)| T::span(a, b)).sum()
    }

    pub fn contains(&self, x: T) -> bool {
        let i = self.spans.partition_point(|&(_, b)| b <= x);
        i < self.spans.len() && self.spans[i].0 <= x
    }

    /// Add one range in place (normalising it first).
    pub fn insert(&mut self, a: T, b: T) {
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        if a == b {
            return;
        }
        // Ranges strictly before (end < a) stay; ranges touching [a, b] are absorbed.
        let lo = self.spans.partition_point(|&(_, e)| e < a);
        let hi = self.spans.partition_point(|&(s, _)| s <= b);
        if lo == hi {
            self.spans.insert(lo, (a, b));
            return;
        }
        let start = a.min(self.spans[lo].0);
        let end = b.max(self.spans[hi - 1].1);
        self.spans[lo] = (start, end);
        self.spans.drain(lo + 1..hi);
    }

    pub fn union(&self, other: &Self) -> Self {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        let mut all = Vec::with_capacity(self.spans.len() + other.spans.len());
        let (mut i, mut j) = (0, 0);
        while i < self.spans.len() || j < other.spans.len() {
            let take_left =
                j >= other.spans.len() || (i < self.spans.len() && self.spans[i] <= other.spans[j]);
            if take_left {
                all.push(self.spans[i]);
                i += 1;
            } else {
                all.push(other.spans[j]);
                j += 1;
            }
        }
        Self {
            spans: merge_sorted(all),
        }
    }

    /// In-place union, cheap when `other` is small (the per-step case).
    pub fn union_with(&mut self, other: &Self) {
        if other.spans.len() <= 4 {
            for &(a, b) in &other.spans {
                self.insert(a, b);
            }
        } else {
            *self = self.union(other);
        }
    }

    pub fn intersection(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        for_each_overlap(&self.spans, &other.spans, |a, b| out.push((a, b)));
        Self { spans: out }
    }

    /// `measure(self ∩ other)` without building the intersection.
    pub fn intersection_measure(&self, other: &Self) -> u64 {
        let mut total = 0;
        for_each_overlap(&self.spans, &other.spans, |a, b| total += T::span(a, b));
        total
    }

    pub fn difference(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        let mut j = 0;
        for &(a, b) in &self.spans {
            let mut cur = a;
            while j < other.spans.len() && other.spans[j].1 <= cur {
                j += 1;
            }
            let mut k = j;
            while k < other.spans.len() && other.spans[k].0 < b {
                let (oa, ob) = other.spans[k];
                if oa > cur {
                    out.push((cur, oa));
                }
                cur = cur.max(ob);
                if cur >= b {
                    break;
                }
                k += 1;
            }
            if cur < b {
                out.push((cur, b));
            }
        }
        Self { spans: out }
    }

    /// Whether any range of the set overlaps the query `[a, b)`. With `touch`, a range starting
    /// exactly at `b` also counts: the ContextBench reference compares a definition's exclusive
    /// end byte as if it were inclusive.
    pub fn overlaps(&self, a: T, b: T, touch: bool) -> bool {
        // The first range ending after `a` has the smallest start of all that could overlap.
        let i = self.spans.partition_point(|&(_, e)| e <= a);
        i < self.spans.len() && (self.spans[i].0 < b || (touch && self.spans[i].0 == b))
    }
}

impl LineRanges {
    /// Inclusive line ranges `[a, b]` (1-based); reversed ones are swapped, line 0 is dropped.
    pub fn from_inclusive<I: IntoIterator<Item = (u32, u32)>>(ranges: I) -> Self {
        Self::from_ranges(ranges.into_iter().filter_map(|(a, b)| {
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            let a = a.max(1);
            if b < a {
                None
            } else {
                Some((a, b.saturating_add(1)))
            }
        }))
    }

    /// The ranges as inclusive `[first, last]` line pairs.
    pub fn inclusive(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.spans.iter().map(|&(a, b)| (a, b - 1))
    }

    pub fn insert_inclusive(&mut self, a: u32, b: u32) {
        self.insert(a, b.saturating_add(1));
    }
}

fn merge_sorted<T: Coord>(sorted: Vec<(T, T)>) -> Vec<(T, T)> {
    let mut out: Vec<(T, T)> = Vec::with_capacity(sorted.len());
    for (a, b) in sorted {
        match out.last_mut() {
            Some(last) if a <= last.1 => {
                if b > last.1 {
                    last.1 = b;
                }
            }
            _ => out.push((a, b)),
        }
    }
    out
}

fn for_each_overlap<T: Coord>(x: &[(T, T)], y: &[(T, T)], mut f: impl FnMut(T, T)) {
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        let a = x[i].0.max(y[j].0);
        let b = x[i].1.min(y[j].1);
        if a < b {
            f(a, b);
        }
        if x[i].1 < y[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
}

/// Ranges per file, indexed by a dense file id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileMap<T: Coord> {
    files: Vec<RangeSet<T>>,
}

impl<T: Coord> FileMap<T> {
    pub fn new() -> Self {
        Self { files: Vec::new() }
    }

    pub fn with_files(n: usize) -> Self {
        Self {
            files: vec![RangeSet::new(); n],
        }
    }

    pub fn get(&self, file: u32) -> Option<&RangeSet<T>> {
        self.files.get(file as usize)
    }

    pub fn entry(&mut self, file: u32) -> &mut RangeSet<T> {
        let i = file as usize;
        if i >= self.files.len() {
            self.files.resize_with(i + 1, RangeSet::new);
        }
        &mut self.files[i]
    }

    pub fn insert(&mut self, file: u32, a: T, b: T) {
        self.entry(file).insert(a, b);
    }

    /// Files with a non-empty set, ascending.
    pub fn files(&self) -> impl Iterator<Item = (u32, &RangeSet<T>)> + '_ {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
            .map(|(i, r)| (i as u32, r))
    }

    pub fn measure(&self) -> u64 {
        self.files.iter().map(RangeSet::measure).sum()
    }

    pub fn intersection_measure(&self, other: &Self) -> u64 {
        self.files
            .iter()
            .zip(other.files.iter())
            .map(|(a, b)| a.intersection_measure(b))
            .sum()
    }

    pub fn union_with(&mut self, other: &Self) {
        for (f, r) in other.files() {
            self.entry(f).union_with(r);
        }
    }

    pub fn difference(&self, other: &Self) -> Self {
        let empty = RangeSet::new();
        Self {
            files: self
                .files
                .iter()
                .enumerate()
                .map(|(i, r)| r.difference(other.files.get(i).unwrap_or(&empty)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_reversed_empty_adjacent() {
        let r = ByteRanges::from_ranges([(10, 5), (5, 5), (20, 30), (30, 40), (0, 2)]);
        assert_eq!(r.spans(), &[(0, 2), (5, 10), (20, 40)]);
        assert_eq!(r.measure(), 2 + 5 + 20);
    }

    #[test]
    fn inclusive_lines_merge_when_adjacent() {
        let r = LineRanges::from_inclusive([(3, 1), (4, 6), (9, 9), (0, 0)]);
        assert_eq!(r.inclusive().collect::<Vec<_>>(), vec![(1, 6), (9, 9)]);
        assert_eq!(r.measure(), 7);
    }

    #[test]
    fn set_operations_by_hand() {
        let a = LineRanges::from_inclusive([(1, 10), (20, 30)]);
        let b = LineRanges::from_inclusive([(5, 25)]);
        assert_eq!(
            a.intersection(&b).inclusive().collect::<Vec<_>>(),
            vec![(5, 10), (20, 25)]
        );
        assert_eq!(a.intersection_measure(&b), 12);
        assert_eq!(
            a.difference(&b).inclusive().collect::<Vec<_>>(),
            vec![(1, 4), (26, 30)]
        );
        assert_eq!(a.union(&b).inclusive().collect::<Vec<_>>(), vec![(1, 30)]);
    }

    #[test]
    fn insert_absorbs_and_touches() {
        let mut r = ByteRanges::from_ranges([(0, 2), (4, 6), (8, 10)]);
        r.insert(2, 8);
        assert_eq!(r.spans(), &[(0, 10)]);
        r.insert(12, 11);
        assert_eq!(r.spans(), &[(0, 10), (11, 12)]);
    }

    #[test]
    fn overlap_with_and_without_touch() {
        let r = ByteRanges::from_ranges([(10, 20)]);
        assert!(!r.overlaps(20, 30, false));
        assert!(!r.overlaps(20, 30, true));
        assert!(r.overlaps(19, 30, false));
        assert!(!r.overlaps(0, 10, false));
        assert!(r.overlaps(0, 10, true));
        assert!(r.overlaps(0, 11, false));
    }
}
