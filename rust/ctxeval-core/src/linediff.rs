//! Line diffs of two versions of a file, stated as tree-sitter edits, and the arithmetic that
//! carries definitions of the old version over to the new one.
//!
//! Incremental re-parsing needs, for each change, where it starts and where it ends in the old
//! and the new text, in bytes and in (row, column) points, each edit stated in the coordinates
//! left by the edits before it (tree-sitter applies them one after another). The diff is a
//! minimal line diff (Myers, from the `similar` crate) so each edit starts and ends on a line
//! boundary: columns never move, rows and bytes shift by whole lines. Rows count `\n` only, as
//! tree-sitter's points do.
//!
//! [`carry_over`] then says which definitions of the old version are untouched by the edits
//! and by the ranges whose syntax changed, and where they sit in the new version; what is
//! untouched keeps its node, its kind and its name, so only the rest has to be searched again.

use similar::{capture_diff_slices, Algorithm, DiffOp};

/// A (row, column) position: 0-based row, column in bytes, as tree-sitter's `Point`.
pub type Point = (u64, u64);

/// One `Tree.edit` call, in the coordinates of the document as edited so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start_byte: u64,
    pub old_end_byte: u64,
    pub new_end_byte: u64,
    pub start_point: Point,
    pub old_end_point: Point,
    pub new_end_point: Point,
}

impl Edit {
    /// Bytes this edit removes plus bytes it inserts: the size of the change.
    pub fn changed_bytes(&self) -> u64 {
        (self.old_end_byte - self.start_byte) + (self.new_end_byte - self.start_byte)
    }
}

/// The lines of `data`, each with its `\n` (a last line without one ends at the end).
pub fn split_lines(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(data.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', data) {
        out.push(&data[start..=i]);
        start = i + 1;
    }
    if start < data.len() {
        out.push(&data[start..]);
    }
    out
}

/// `(i1, i2, j1, j2)`: `a[i1..i2]` becomes `b[j1..j2]`, in order, everything else equal.
/// Adjacent changes are joined into one.
///
/// The diff runs on line hashes (comparing two numbers is much cheaper than comparing two
/// lines, and Myers compares a great deal); every pair of lines it then calls equal is
/// compared byte for byte, and should two different lines share a hash, the diff is run again
/// on the lines themselves. So the result is exact either way.
pub fn line_ops(a: &[&[u8]], b: &[&[u8]]) -> Vec<(usize, usize, usize, usize)> {
    line_ops_by(a, b, line_hash)
}

fn line_ops_by(
    a: &[&[u8]],
    b: &[&[u8]],
    hash: impl Fn(&[u8]) -> u64,
) -> Vec<(usize, usize, usize, usize)> {
    ops_of(a, &keys(a, &hash), b, &keys(b, &hash))
}

/// Each line's key, what the diff compares first: its hash and its length (so lines of
/// different lengths never compare equal, whatever the hash).
fn keys(lines: &[&[u8]], hash: impl Fn(&[u8]) -> u64) -> Vec<(u64, usize)> {
    lines.iter().map(|l| (hash(l), l.len())).collect()
}

/// A text's lines and their keys (hash and length): what the bound and the diff compare,
/// worked out once for both.
struct Keyed<'a> {
    lines: Vec<&'a [u8]>,
    keys: Vec<(u64, usize)>,
}

impl<'a> Keyed<'a> {
    fn new(data: &'a [u8]) -> Self {
        let lines = split_lines(data);
        let keys = keys(&lines, line_hash);
        Keyed { lines, keys }
    }
}

/// [`line_ops`] of lines whose keys are given (`ka[i]` is `a[i]`'s).
fn ops_of(
    a: &[&[u8]],
    ka: &[(u64, usize)],
    b: &[&[u8]],
    kb: &[(u64, usize)],
) -> Vec<(usize, usize, usize, usize)> {
    let ops = capture_diff_slices(Algorithm::Myers, ka, kb);
    let exact = ops.iter().all(|op| match *op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => a[old_index..old_index + len] == b[new_index..new_index + len],
        _ => true,
    });
    let ops = if exact {
        ops
    } else {
        capture_diff_slices(Algorithm::Myers, a, b)
    };
    let mut out: Vec<(usize, usize, usize, usize)> = Vec::new();
    for op in ops {
        let (i1, i2, j1, j2) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index, old_index + old_len, new_index, new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, old_index, new_index, new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index,
                old_index + old_len,
                new_index,
                new_index + new_len,
            ),
        };
        match out.last_mut() {
            Some(last) if last.1 == i1 && last.3 == j1 => {
                last.1 = i2;
                last.3 = j2;
            }
            _ => out.push((i1, i2, j1, j2)),
        }
    }
    out
}

fn offsets(lines: &[&[u8]]) -> Vec<u64> {
    let mut out = Vec::with_capacity(lines.len() + 1);
    let mut at = 0u64;
    out.push(0);
    for l in lines {
        at += l.len() as u64;
        out.push(at);
    }
    out
}

/// Where line `i` starts (`i == lines.len()`: the end of the text).
fn point_at_line(lines: &[&[u8]], i: usize) -> Point {
    match lines.last() {
        Some(last) if i == lines.len() && !last.ends_with(b"\n") => {
            (i as u64 - 1, last.len() as u64)
        }
        _ => (i as u64, 0),
    }
}

/// The point reached after `text` when starting at `point`.
fn advance(point: Point, text: &[u8]) -> Point {
    let rows = memchr::memchr_iter(b'\n', text).count() as u64;
    match memchr::memrchr(b'\n', text) {
        None => (point.0, point.1 + text.len() as u64),
        Some(last) => (point.0 + rows, (text.len() - last - 1) as u64),
    }
}

/// The edits turning `old` into `new`, in order, each in the coordinates left by the ones
/// before it (so they can be applied to a tree one after another). Empty when equal.
pub fn line_edits(old: &[u8], new: &[u8]) -> Vec<Edit> {
    if old == new {
        return Vec::new();
    }
    edits_of(old, &Keyed::new(old), &Keyed::new(new))
}

/// [`line_edits`] of `old`'s lines `a` and the new text's `b`.
fn edits_of(old: &[u8], a: &Keyed, b: &Keyed) -> Vec<Edit> {
    let (off_a, off_b) = (offsets(&a.lines), offsets(&b.lines));
    ops_of(&a.lines, &a.keys, &b.lines, &b.keys)
        .into_iter()
        .map(|(i1, i2, j1, j2)| {
            // Everything before this edit is in new coordinates already.
            let start = off_b[j1];
            let start_point = point_at_line(&b.lines, j1);
            let removed = &old[off_a[i1] as usize..off_a[i2] as usize];
            Edit {
                start_byte: start,
                old_end_byte: start + removed.len() as u64,
                new_end_byte: off_b[j2],
                start_point,
                old_end_point: advance(start_point, removed),
                new_end_point: point_at_line(&b.lines, j2),
            }
        })
        .collect()
}

/// A hash of a line, eight bytes at a step (the multiply-rotate of rustc's FxHash, then the
/// high half folded into the low, which the hash table below indexes by): equal lines hash
/// equal, which is all the bound needs, and the diff checks every line it calls equal byte
/// for byte. The line's length is kept beside it, so the zero padding of the last word
/// cannot make two lines of different lengths equal. About eight times faster than the
/// byte-at-a-time FNV-1a it replaces, on the real-history workload's version pairs.
fn line_hash(line: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let step = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
    let mut words = line.chunks_exact(8);
    let mut h = words.by_ref().fold(0u64, |h, w| {
        step(h, u64::from_le_bytes(w.try_into().expect("8 bytes")))
    });
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = step(h, u64::from_le_bytes(last));
    }
    h ^ (h >> 32)
}

/// Hashes the keys of [`lower_bound_of`]'s table as themselves: they are hashes already.
#[derive(Default)]
struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8)) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = self
            .0
            .wrapping_add((n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    }
}

/// A lower bound of the bytes any line diff of `old` and `new` removes plus inserts: the
/// bytes of the lines one side has more copies of than the other. Linear time.
pub fn changed_bytes_lower_bound(old: &[u8], new: &[u8]) -> u64 {
    lower_bound_of(&Keyed::new(old).keys, &Keyed::new(new).keys)
}

fn lower_bound_of(old: &[(u64, usize)], new: &[(u64, usize)]) -> u64 {
    let mut count: std::collections::HashMap<
        (u64, usize),
        i64,
        std::hash::BuildHasherDefault<KeyHasher>,
    > = std::collections::HashMap::with_capacity_and_hasher(old.len(), Default::default());
    for &k in old {
        *count.entry(k).or_default() += 1;
    }
    for &k in new {
        *count.entry(k).or_default() -= 1;
    }
    // Distinct lines that share a hash and a length are rare; counting them as equal only
    // lowers the bound.
    count
        .iter()
        .map(|(&(_, len), &n)| n.unsigned_abs() * len as u64)
        .sum()
}

/// [`line_edits`], or `None` as soon as it is clear that the edits would remove and insert
/// more than `max_changed` bytes or number more than `max_edits`: then the caller parses from
/// scratch, and the (costly) diff of two very different versions is not computed at all.
/// Each text is split and its lines hashed once, for the bound and the diff both.
pub fn line_edits_within(
    old: &[u8],
    new: &[u8],
    max_changed: u64,
    max_edits: usize,
) -> Option<Vec<Edit>> {
    if old == new {
        return Some(Vec::new());
    }
    let (a, b) = (Keyed::new(old), Keyed::new(new));
    if lower_bound_of(&a.keys, &b.keys) > max_changed {
        return None;
    }
    let edits = edits_of(old, &a, &b);
    let changed: u64 = edits.iter().map(Edit::changed_bytes).sum();
    (changed <= max_changed && edits.len() <= max_edits).then_some(edits)
}

/// One definition's place: half-open bytes, 1-based inclusive lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start_byte: u64,
    pub end_byte: u64,
    pub start_line: u64,
    pub end_line: u64,
}

/// For each old definition (any order): where it sits in the new version when nothing changed
/// around it, else `None`.
///
/// A definition is touched when an edit starts inside its old bytes or removes any of them
/// (an insertion at its first byte only moves it), or its new bytes meet
/// one of `changed` (new coordinates: the edits' new bytes and the ranges whose syntax changed,
/// each widened as the caller needs). "Meet" is the query cursor's rule for a byte range:
/// `end > lo && start < hi`, so a definition is untouched exactly when a query restricted to
/// `changed` cannot match it. An untouched definition moves by the bytes and rows the edits
/// before it added or removed (edits are whole lines, so columns stay).
pub fn carry_over(defs: &[Span], edits: &[Edit], changed: &[(u64, u64)]) -> Vec<Option<Span>> {
    // Each edit in old coordinates, and the shift it leaves for what follows it.
    let mut old_ranges = Vec::with_capacity(edits.len());
    let mut shifts = Vec::with_capacity(edits.len());
    let (mut dbyte, mut drow) = (0i64, 0i64);
    for e in edits {
        let old_start = (e.start_byte as i64 - dbyte) as u64;
        old_ranges.push((old_start, old_start + (e.old_end_byte - e.start_byte)));
        dbyte += e.new_end_byte as i64 - e.old_end_byte as i64;
        drow += e.new_end_point.0 as i64 - e.old_end_point.0 as i64;
        shifts.push((dbyte, drow));
    }
    // Merged, so that the last range starting before a definition's end is the only one
    // that can reach into it.
    let mut sorted: Vec<(u64, u64)> = changed.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    for (lo, hi) in sorted {
        match merged.last_mut() {
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    defs.iter()
        .map(|d| {
            // The edits ending at or before the definition's start shift it.
            let k = old_ranges.partition_point(|&(_, end)| end <= d.start_byte);
            if old_ranges[k..]
                .iter()
                .take_while(|&&(s, _)| s < d.end_byte)
                .any(|&(_, e)| e > d.start_byte)
            {
                return None;
            }
            let (db, dr) = if k == 0 { (0, 0) } else { shifts[k - 1] };
            let moved = Span {
                start_byte: (d.start_byte as i64 + db) as u64,
                end_byte: (d.end_byte as i64 + db) as u64,
                start_line: (d.start_line as i64 + dr) as u64,
                end_line: (d.end_line as i64 + dr) as u64,
            };
            let c = merged.partition_point(|&(lo, _)| lo < moved.end_byte);
            if c > 0 && merged[c - 1].1 > moved.start_byte {
                return None;
            }
            Some(moved)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(doc: &[u8], offset: u64) -> Point {
        let head = &doc[..offset as usize];
        let row = memchr::memchr_iter(b'\n', head).count() as u64;
        let col = match memchr::memrchr(b'\n', head) {
            Some(i) => offset - i as u64 - 1,
            None => offset,
        };
        (row, col)
    }

    /// Applying the edits one after another to `old` gives `new`, with exact points.
    fn check(old: &[u8], new: &[u8]) -> Vec<Edit> {
        let edits = line_edits(old, new);
        let mut doc = old.to_vec();
        for e in &edits {
            assert_eq!(e.start_point, point(&doc, e.start_byte));
            assert_eq!(e.old_end_point, point(&doc, e.old_end_byte));
            let (s, oe, ne) = (
                e.start_byte as usize,
                e.old_end_byte as usize,
                e.new_end_byte as usize,
            );
            let mut next = doc[..s].to_vec();
            next.extend_from_slice(&new[s..ne]);
            next.extend_from_slice(&doc[oe..]);
            doc = next;
            assert_eq!(e.new_end_point, point(&doc, e.new_end_byte));
        }
        assert_eq!(doc, new);
        edits
    }

    #[test]
    fn known_changes() {
        let old = b"a\nb\nc\nd\n";
        assert!(line_edits(old, old).is_empty());
        let e = check(old, b"a\nB\nc\nd\n");
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].start_byte, e[0].old_end_byte, e[0].new_end_byte),
            (2, 4, 4)
        );
        assert_eq!(
            (e[0].start_point, e[0].old_end_point, e[0].new_end_point),
            ((1, 0), (2, 0), (2, 0))
        );
        // Two changes: the second is stated after the first (a line longer) is applied.
        let e = check(b"a\nb\nc\nd\ne\nf\n", b"a\nbb\nc\nd\nE\nf\n");
        assert_eq!(e.len(), 2);
        assert_eq!(
            (e[0].start_byte, e[0].old_end_byte, e[0].new_end_byte),
            (2, 4, 5)
        );
        assert_eq!(
            (e[1].start_byte, e[1].old_end_byte, e[1].new_end_byte),
            (9, 11, 11)
        );
    }

    #[test]
    fn minimal_on_scattered_changes() {
        // Myers finds the two one-line changes in a long file, not one big replacement.
        let old: Vec<u8> = (0..500)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let new = String::from_utf8(old.clone())
            .unwrap()
            .replace("line 10\n", "line ten\n")
            .replace("line 400\n", "")
            .into_bytes();
        let e = check(&old, &new);
        assert_eq!(e.len(), 2);
        assert_eq!(e.iter().map(Edit::changed_bytes).sum::<u64>(), 8 + 9 + 9);
    }

    #[test]
    fn bounded_edits_give_up_early_and_agree_otherwise() {
        let old: Vec<u8> = (0..300)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut new = old.clone();
        new.extend_from_slice(b"one more\n");
        let all = line_edits(&old, &new);
        assert_eq!(line_edits_within(&old, &new, 9, 1), Some(all.clone()));
        assert_eq!(line_edits_within(&old, &new, 8, 1), None);
        assert_eq!(line_edits_within(&old, &new, 100, 0), None);
        // A rewrite is refused by the bound alone.
        let other: Vec<u8> = (0..300)
            .flat_map(|i| format!("row {i}\n").into_bytes())
            .collect();
        assert!(changed_bytes_lower_bound(&old, &other) > old.len() as u64);
        assert_eq!(
            line_edits_within(&old, &other, old.len() as u64, 1000),
            None
        );
        assert_eq!(line_edits_within(&old, &old, 0, 0), Some(vec![]));
    }

    #[test]
    fn lines_sharing_a_hash_are_still_told_apart() {
        // Every line of the same length collides: the byte check must catch it.
        let old = b"aa\nbb\ncc\n";
        let new = b"aa\nxx\ncc\n";
        let (a, b) = (split_lines(old), split_lines(new));
        let colliding = line_ops_by(&a, &b, |_| 0);
        assert_eq!(colliding, vec![(1, 2, 1, 2)]);
        assert_eq!(colliding, line_ops(&a, &b));
    }

    #[test]
    fn colliding_hashes_give_an_exact_minimal_diff_if_not_the_same_alignment() {
        // Found by the property test below: with every line of a length colliding, Myers
        // sees more equalities and breaks a tie another way; what it answers is still exact
        // (each line it calls equal is) and as short.
        let old = b"b\nb\nb\nb\nb\nb\nb\nb\nb\nx = 1\nb\nb\nb\nb\nb\nb\nb\nb\nb\nx = 1\nb\n\
                    \xc3\xa9def f():\nb\nb\nb\nb\nb\nb\nb\nb\nb\nb\na";
        let new = b"x = 1\n\xc3\xa9def f():\n\xc3\xa9\xc3\xa9}x = 1\n";
        let (a, b) = (split_lines(old), split_lines(new));
        let (exact, colliding) = (line_ops(&a, &b), line_ops_by(&a, &b, |_| 0));
        assert_eq!(exact, vec![(0, 19, 0, 0), (20, 21, 1, 1), (22, 33, 2, 3)]);
        assert_eq!(
            colliding,
            vec![(0, 9, 0, 0), (10, 21, 1, 1), (22, 33, 2, 3)]
        );
        assert!(rebuilds(&a, &b, &colliding) && rebuilds(&a, &b, &exact));
        assert_eq!(changed_lines(&colliding), changed_lines(&exact));
    }

    #[test]
    fn no_final_newline_and_crlf() {
        check(b"a\nb", b"a\nc");
        check(b"a\nb\n", b"a\nb");
        check(b"a\nb", b"a\nb\n");
        check(b"", b"x\ny");
        check(b"x\ny", b"");
        check(b"a\r\nb\r\n", b"a\r\nc\r\nb\r\n");
        // A lone \r is not a row break for tree-sitter.
        check(b"a\rb\nc\n", b"a\rB\nc\n");
    }

    fn span(s: u64, e: u64, l1: u64, l2: u64) -> Span {
        Span {
            start_byte: s,
            end_byte: e,
            start_line: l1,
            end_line: l2,
        }
    }

    #[test]
    fn carry_over_moves_untouched_definitions() {
        // old: 5 lines of 2 bytes; line 2 ("b\n", bytes 2..4) becomes two lines.
        let old = b"a\nb\nc\nd\ne\n";
        let new = b"a\nB\nB\nc\nd\ne\n";
        let edits = line_edits(old, new);
        let defs = [
            span(0, 2, 1, 1),  // line 1, before the edit
            span(2, 4, 2, 2),  // the edited line
            span(4, 8, 3, 4),  // lines 3-4, after it
            span(0, 10, 1, 5), // the whole file, around it
        ];
        let got = carry_over(&defs, &edits, &[]);
        assert_eq!(got[0], Some(span(0, 2, 1, 1)));
        assert_eq!(got[1], None);
        assert_eq!(got[2], Some(span(6, 10, 4, 5)));
        assert_eq!(got[3], None);
        // A changed range (new coordinates) touching the moved definition removes it too.
        let got = carry_over(&defs, &edits, &[(9, 11)]);
        assert_eq!(got[2], None);
        // Touching is the query cursor's rule: a range ending where the definition starts
        // does not meet it.
        let got = carry_over(&defs, &edits, &[(5, 6)]);
        assert_eq!(got[2], Some(span(6, 10, 4, 5)));
    }

    #[test]
    fn carry_over_pure_insertions_and_deletions() {
        let old = b"a\nb\nc\n";
        // An insertion at a definition's first byte moves it; one inside it touches it.
        let edits = line_edits(old, b"a\nX\nb\nc\n");
        let got = carry_over(&[span(2, 4, 2, 2), span(0, 2, 1, 1)], &edits, &[]);
        assert_eq!(got, vec![Some(span(4, 6, 3, 3)), Some(span(0, 2, 1, 1))]);
        let got = carry_over(&[span(0, 6, 1, 3)], &edits, &[]);
        assert_eq!(got, vec![None]);
        let edits = line_edits(old, b"a\nc\n");
        let got = carry_over(&[span(0, 2, 1, 1), span(4, 6, 3, 3)], &edits, &[]);
        assert_eq!(got, vec![Some(span(0, 2, 1, 1)), Some(span(2, 4, 2, 2))]);
    }

    /// Whether `ops` turn `a` into `b`: the lines between them are equal, in order.
    fn rebuilds(a: &[&[u8]], b: &[&[u8]], ops: &[(usize, usize, usize, usize)]) -> bool {
        let (mut i, mut j) = (0, 0);
        for &(i1, i2, j1, j2) in
            ops.iter()
                .chain(std::iter::once(&(a.len(), a.len(), b.len(), b.len())))
        {
            if i1 < i || j1 < j || i1 - i != j1 - j || a[i..i1] != b[j..j1] {
                return false;
            }
            (i, j) = (i2, j2);
        }
        true
    }

    /// Lines removed plus lines inserted.
    fn changed_lines(ops: &[(usize, usize, usize, usize)]) -> usize {
        ops.iter()
            .map(|&(i1, i2, j1, j2)| (i2 - i1) + (j2 - j1))
            .sum()
    }

    fn doc() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let pieces: Vec<&'static [u8]> = vec![
            b"a",
            b"b\n",
            b"\r\n",
            b"\n",
            b"x = 1\n",
            b"\xc3\xa9",
            b"def f():\n",
            b"  ",
            b"}",
        ];
        proptest::collection::vec(proptest::sample::select(pieces), 0..80).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(600))]

        #[test]
        fn edits_rebuild_the_new_text_with_exact_points(old in doc(), new in doc()) {
            check(&old, &new);
        }

        #[test]
        fn the_hash_does_not_change_the_diff(old in doc(), new in doc()) {
            // The diff is the one the byte-at-a-time FNV-1a hash it replaced gave (neither
            // hash collides on these lines, so Myers sees the same equalities); and the
            // bounded diff, when it answers, is the diff.
            let fnv = |l: &[u8]| l.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            let (a, b) = (split_lines(&old), split_lines(&new));
            let ops = line_ops(&a, &b);
            proptest::prop_assert_eq!(&ops, &line_ops_by(&a, &b, fnv));
            // Where every line of a length collides, the answer is still exact and minimal
            // (not always the same alignment: Myers then breaks ties among more equalities).
            let colliding = line_ops_by(&a, &b, |_| 0);
            proptest::prop_assert!(rebuilds(&a, &b, &colliding));
            proptest::prop_assert_eq!(changed_lines(&colliding), changed_lines(&ops));
            proptest::prop_assert!(rebuilds(&a, &b, &ops));
            if let Some(within) = line_edits_within(&old, &new, u64::MAX, usize::MAX) {
                proptest::prop_assert_eq!(within, line_edits(&old, &new));
            } else {
                proptest::prop_assert!(false, "no bound was given");
            }
        }

        #[test]
        fn the_bound_is_a_lower_bound(old in doc(), new in doc()) {
            let changed: u64 = line_edits(&old, &new).iter().map(Edit::changed_bytes).sum();
            proptest::prop_assert!(changed_bytes_lower_bound(&old, &new) <= changed);
        }

        #[test]
        fn carried_definitions_keep_their_bytes(old in doc(), new in doc(),
                                                 cuts in proptest::collection::vec(0usize..200, 2)) {
            // Any line range of the old text that carries over holds the same bytes at its new
            // place, on the same number of lines.
            let lines = split_lines(&old);
            if lines.is_empty() { return Ok(()); }
            let (mut l1, mut l2) = (cuts[0] % lines.len(), cuts[1] % lines.len());
            if l1 > l2 { std::mem::swap(&mut l1, &mut l2); }
            let off = offsets(&lines);
            let d = span(off[l1], off[l2 + 1], l1 as u64 + 1, l2 as u64 + 1);
            let edits = line_edits(&old, &new);
            if let Some(m) = carry_over(&[d], &edits, &[])[0] {
                proptest::prop_assert_eq!(&new[m.start_byte as usize..m.end_byte as usize],
                                          &old[d.start_byte as usize..d.end_byte as usize]);
                proptest::prop_assert_eq!(m.end_line - m.start_line, d.end_line - d.start_line);
                let nl = split_lines(&new);
                let noff = offsets(&nl);
                proptest::prop_assert_eq!(noff[m.start_line as usize - 1], m.start_byte);
            }
        }
    }
}
