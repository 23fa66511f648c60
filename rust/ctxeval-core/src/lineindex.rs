//! Line ↔ byte mapping over one file's exact bytes.
//!
//! A line's bytes include its newline (`\n`, or `\r\n` whose `\r` simply belongs to the line);
//! a last line without a newline ends at the end of the file; an empty file has no lines and a
//! file ending in `\n` has no empty line after it.

/// Byte offsets of the starts of every line of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<u64>,
    len: u64,
    trailing_newline: bool,
}

impl LineIndex {
    pub fn new(data: &[u8]) -> Self {
        let len = data.len() as u64;
        let mut starts = Vec::with_capacity(data.len() / 32 + 1);
        if !data.is_empty() {
            starts.push(0);
            starts.extend(
                memchr::memchr_iter(b'\n', data)
                    .map(|i| i as u64 + 1)
                    .filter(|&s| s < len),
            );
        }
        Self {
            starts,
            len,
            trailing_newline: data.last() == Some(&b'\n'),
        }
    }

    /// Number of bytes of the file.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of lines (0 for an empty file).
    pub fn line_count(&self) -> u32 {
        self.starts.len() as u32
    }

    /// Whether the last line ends with a newline (false for an empty file).
    pub fn ends_with_newline(&self) -> bool {
        self.trailing_newline
    }

    /// Half-open byte range of a 1-based line, newline included.
    pub fn line_bytes(&self, line: u32) -> Option<(u64, u64)> {
        if line == 0 || line > self.line_count() {
            return None;
        }
        let i = (line - 1) as usize;
        let end = self.starts.get(i + 1).copied().unwrap_or(self.len);
        Some((self.starts[i], end))
    }

    /// Half-open byte range covering the inclusive lines `[first, last]` (already clipped).
    pub fn lines_bytes(&self, first: u32, last: u32) -> Option<(u64, u64)> {
        let (a, _) = self.line_bytes(first)?;
        let (_, b) = self.line_bytes(last)?;
        (a < b).then_some((a, b))
    }

    /// The 1-based line holding a byte offset.
    pub fn line_of(&self, byte: u64) -> Option<u32> {
        if byte >= self.len {
            return None;
        }
        Some(self.starts.partition_point(|&s| s <= byte) as u32)
    }

    /// Clip an inclusive line range as given by an agent or annotator to the file:
    /// `end = None` means to the end of the file, reversed ranges are swapped, lines below 1 and
    /// past the end are cut. `None` when nothing of the file remains.
    pub fn clip(&self, start: i64, end: Option<i64>) -> Option<(u32, u32)> {
        let n = i64::from(self.line_count());
        // "From `start` to the end" starting past the end shows nothing; only an explicit
        // reversed pair is swapped.
        let (a, b) = match end {
            None => (start, n),
            Some(end) if start <= end => (start, end),
            Some(end) => (end, start),
        };
        let a = a.max(1);
        let b = b.min(n);
        (a <= b).then_some((a as u32, b as u32))
    }

    /// Offset of the start of line `i + 1` as the ContextBench reference computes it: its table
    /// holds one more entry, `len`, when the file ends with a newline.
    fn cb_offset(&self, i: usize) -> Option<u64> {
        if i < self.starts.len() {
            Some(self.starts[i])
        } else if i == self.starts.len() && self.trailing_newline {
            Some(self.len)
        } else {
            None
        }
    }

    /// The ContextBench reference's `line_to_byte`, as a half-open range: start lines below 1
    /// become 1, a reversed range collapses to its start line, a start past the end drops the
    /// range, an empty file gives one byte, and a file ending with a newline has one phantom
    /// line whose single byte lies just past the end.
    pub fn cb_line_to_byte(&self, start: i64, end: i64) -> Option<(u64, u64)> {
        if self.len == 0 {
            return Some((0, 1));
        }
        let start = start.max(1);
        let end = end.max(start);
        let start_idx = usize::try_from(start - 1).ok()?;
        let start_byte = self.cb_offset(start_idx)?;
        let end_idx = usize::try_from(end - 1).ok()?;
        let end_incl = match end_idx.checked_add(1).and_then(|i| self.cb_offset(i)) {
            Some(next) => next - 1,
            None => self.len - 1,
        };
        Some((start_byte, end_incl.max(start_byte) + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_with_and_without_final_newline() {
        let ix = LineIndex::new(b"ab\ncd\n");
        assert_eq!(ix.line_count(), 2);
        assert_eq!(ix.line_bytes(1), Some((0, 3)));
        assert_eq!(ix.line_bytes(2), Some((3, 6)));
        assert_eq!(ix.line_bytes(3), None);
        let ix = LineIndex::new(b"ab\ncd");
        assert_eq!(ix.line_count(), 2);
        assert_eq!(ix.line_bytes(2), Some((3, 5)));
        assert!(!ix.ends_with_newline());
    }

    #[test]
    fn crlf_and_empty() {
        let ix = LineIndex::new(b"a\r\nb\r\n");
        assert_eq!(ix.line_bytes(1), Some((0, 3)));
        assert_eq!(ix.line_bytes(2), Some((3, 6)));
        let e = LineIndex::new(b"");
        assert_eq!(e.line_count(), 0);
        assert_eq!(e.clip(1, None), None);
        let nl = LineIndex::new(b"\n");
        assert_eq!(nl.line_count(), 1);
        assert_eq!(nl.line_bytes(1), Some((0, 1)));
    }

    #[test]
    fn byte_to_line() {
        let ix = LineIndex::new("é\nx\n".as_bytes());
        assert_eq!(ix.line_of(0), Some(1));
        assert_eq!(ix.line_of(2), Some(1));
        assert_eq!(ix.line_of(3), Some(2));
        assert_eq!(ix.line_of(5), None);
    }

    #[test]
    fn clipping() {
        let ix = LineIndex::new(b"1\n2\n3\n");
        assert_eq!(ix.clip(2, Some(10)), Some((2, 3)));
        assert_eq!(ix.clip(3, Some(1)), Some((1, 3)));
        assert_eq!(ix.clip(-5, Some(0)), None);
        assert_eq!(ix.clip(0, None), Some((1, 3)));
        assert_eq!(ix.clip(4, None), None);
    }

    #[test]
    fn contextbench_line_to_byte() {
        let ix = LineIndex::new(b"ab\ncd\n");
        assert_eq!(ix.cb_line_to_byte(1, 1), Some((0, 3)));
        assert_eq!(ix.cb_line_to_byte(2, 1), Some((3, 6)));
        // the phantom line after the final newline
        assert_eq!(ix.cb_line_to_byte(3, 9), Some((6, 7)));
        assert_eq!(ix.cb_line_to_byte(4, 9), None);
        let ix = LineIndex::new(b"ab\ncd");
        assert_eq!(ix.cb_line_to_byte(2, 5), Some((3, 5)));
        assert_eq!(ix.cb_line_to_byte(3, 5), None);
        assert_eq!(LineIndex::new(b"").cb_line_to_byte(7, 9), Some((0, 1)));
    }
}
