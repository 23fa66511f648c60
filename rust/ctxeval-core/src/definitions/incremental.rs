//! Incremental re-parsing: a new version of a file parsed from an earlier version's tree, and
//! the earlier version's definitions re-used where the edits left them alone.
//!
//! The instances of a benchmark sit at many commits of few repositories, so the same path is
//! met again and again in versions that often differ by a few lines. Tree-sitter re-parses such
//! a version from the previous tree, re-using every subtree the edits did not touch, when told
//! where the bytes changed: the edits of a minimal line diff ([`crate::linediff`]). Where the
//! edits cover much of the file, re-using the old tree costs more than it saves, and the version
//! is parsed from scratch ([`Limits`]).
//!
//! The definitions are identical to a from-scratch [`Grammar::extract`]: the query runs only over
//! the byte ranges that changed (the edits, and the ranges whose syntax tree-sitter reports as
//! changed), and the definitions outside them are carried over ([`crate::linediff::carry_over`]
//! says which, and where to), moved by whole lines and re-qualified. Two cases are asked again:
//! a node type that may be captured through its parent, or named after it
//! ([`PresetQuery::parent_dependent`]) whose parent changed; and tree-sitter's error recovery,
//! the one place where an incremental parse may settle on another tree than a fresh one, so a
//! re-parsed tree with an error is parsed again from scratch.

use std::collections::HashSet;

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use super::{make_definition, Definition, Grammar, Naming, PresetQuery, Scopes};
use crate::intervals::ByteRanges;
use crate::linediff::{self, carry_over, Edit, Span};

/// When a version pair is re-parsed from scratch rather than from the old tree.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Re-parse from scratch when the edits remove and insert more than this share of the new
    /// version's bytes.
    pub scratch_fraction: f64,
    /// ... or number more than this.
    pub scratch_edits: usize,
}

/// Measured per version pair on two real histories of pydata/xarray (`docs/performance.md`):
/// below both bounds an incremental extraction takes 0.3-0.8x a fresh one, above them 1.0-1.8x.
pub const DEFAULT_LIMITS: Limits = Limits {
    scratch_fraction: 0.3,
    scratch_edits: 100,
};

/// The earlier version a new one is re-parsed from.
pub struct Previous<'a> {
    pub source: &'a [u8],
    pub tree: &'a Tree,
    /// Its definitions under the same preset, when known.
    pub defs: Option<&'a [Definition]>,
}

/// What an extraction found, and how.
pub struct Extracted {
    pub defs: Vec<Definition>,
    pub tree: Tree,
    /// Definitions carried over from the earlier version.
    pub reused: usize,
    /// Changed byte ranges the query was run over.
    pub queried: usize,
}

fn point((row, column): (u64, u64)) -> Point {
    Point::new(row as usize, column as usize)
}

fn input_edit(e: &Edit) -> InputEdit {
    InputEdit {
        start_byte: e.start_byte as usize,
        old_end_byte: e.old_end_byte as usize,
        new_end_byte: e.new_end_byte as usize,
        start_position: point(e.start_point),
        old_end_position: point(e.old_end_point),
        new_end_position: point(e.new_end_point),
    }
}

/// (tree of `new`, the edited copy of the old tree it was parsed from, or `None` when it was
/// parsed from scratch, the edits).
pub fn reparse(
    parser: &mut Parser,
    old_tree: &Tree,
    old: &[u8],
    new: &[u8],
    limits: Limits,
) -> Option<(Tree, Option<Tree>, Vec<Edit>)> {
    let limit = (limits.scratch_fraction * new.len() as f64).min(2f64.powi(63)) as u64;
    let edits =
        linediff::line_edits_within(old, new, limit, limits.scratch_edits).unwrap_or_default();
    if edits.is_empty() {
        // the same bytes, or too different to pay
        return Some((parser.parse(new, None)?, None, edits));
    }
    let mut edited = old_tree.clone();
    for e in &edits {
        edited.edit(&input_edit(e));
    }
    let tree = parser.parse(new, Some(&edited))?;
    if tree.root_node().has_error() {
        return Some((parser.parse(new, None)?, None, edits));
    }
    Some((tree, Some(edited), edits))
}

/// The definitions of `src`, re-parsed from `previous` when given (see the module's notes).
pub fn extract(
    grammar: &Grammar,
    parser: &mut Parser,
    src: &[u8],
    preset: &str,
    previous: Option<Previous>,
    limits: Limits,
) -> Option<Extracted> {
    let q = grammar.preset(preset)?;
    let whole = |tree: Tree| Extracted {
        defs: q.definitions(&tree, src),
        tree,
        reused: 0,
        queried: 0,
    };
    let Some(prev) = previous else {
        return Some(whole(parser.parse(src, None)?));
    };
    let (tree, edited, edits) = reparse(parser, prev.tree, prev.source, src, limits)?;
    match (edited, prev.defs) {
        (Some(edited), Some(old_defs)) => {
            let (defs, reused, queried) = reuse(&tree, &edited, &edits, old_defs, q, src);
            Some(Extracted {
                defs,
                tree,
                reused,
                queried,
            })
        }
        _ => Some(whole(tree)),
    }
}

/// Merged byte intervals of the new tree where anything may differ from the old version: the
/// edited bytes and the ranges whose syntactic structure changed, each widened by a byte so
/// that nodes merely touching them count as changed.
fn changed_intervals(tree: &Tree, edited: &Tree, edits: &[Edit]) -> Vec<(u64, u64)> {
    let spans = edits
        .iter()
        .map(|e| (e.start_byte.saturating_sub(1), e.new_end_byte + 1))
        .chain(edited.changed_ranges(tree).map(|r| {
            (
                (r.start_byte as u64).saturating_sub(1),
                r.end_byte as u64 + 1,
            )
        }));
    ByteRanges::from_ranges(spans).spans().to_vec()
}

/// The node of `tree` of type `kind` spanning exactly bytes `start..end`.
fn node_at<'t>(tree: &'t Tree, kind: &str, start: u64, end: u64) -> Option<Node<'t>> {
    let (start, end) = (start as usize, end as usize);
    let mut node = tree.root_node().descendant_for_byte_range(start, end);
    while let Some(n) = node {
        if (n.start_byte(), n.end_byte()) != (start, end) {
            break;
        }
        if n.kind() == kind {
            return Some(n);
        }
        node = n.parent();
    }
    None
}

/// Per definition (in `defs` order): its qualified name without the qualified name of its
/// innermost named enclosing definition (`None` for an anonymous one) -- what [`build`]
/// prefixed, recovered by replaying its scopes.
fn locals(defs: &[Definition]) -> Vec<Option<String>> {
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&k| (defs[k].start_byte, std::cmp::Reverse(defs[k].end_byte)));
    let mut out = vec![None; defs.len()];
    let mut stack: Vec<(u64, &str)> = Vec::new();
    for k in order {
        let d = &defs[k];
        while let Some(&(end, _)) = stack.last() {
            if d.start_byte >= end || d.end_byte > end {
                stack.pop();
            } else {
                break;
            }
        }
        if d.qualified_name.is_empty() {
            continue;
        }
        let local = match stack.last() {
            Some((_, parent)) => d
                .qualified_name
                .strip_prefix(parent)
                .and_then(|rest| rest.strip_prefix('.'))
                .unwrap_or(&d.qualified_name),
            None => &d.qualified_name,
        };
        out[k] = Some(local.to_owned());
        stack.push((d.end_byte, &d.qualified_name));
    }
    out
}

/// Where an entry sorts: start byte, end byte descending, found before carried over, sequence.
type Order = (u64, std::cmp::Reverse<u64>, u8, usize);

/// A definition of the new version: found by the query, or carried over from the old one.
enum Entry<'t> {
    Found(Node<'t>),
    Kept(Definition, Option<String>),
}

/// The definitions of `tree`, re-using `old_defs` (of the old version) where they can be;
/// with the numbers of definitions re-used and of changed intervals queried.
///
/// `tree` was parsed from `edited` (the old tree with `edits` applied). A node that meets no
/// changed interval has the same subtree as the node at its old place, moved by whole lines.
/// Every query pattern matches on its root's subtree and captures its root or a child of it
/// (each `queries/*.scm` is so), so the definitions meeting a changed interval are found by
/// running the query restricted to it, and every other match is rooted at an unchanged node:
/// what it captured before is still captured, moved, with the same name -- except the
/// parent-dependent node types whose parent changed, which are asked again. Where the order
/// of the result would rest on the order of captures (two definitions of one byte range, one
/// found again and one carried over) the whole tree is searched instead.
fn reuse(
    tree: &Tree,
    edited: &Tree,
    edits: &[Edit],
    old_defs: &[Definition],
    q: &PresetQuery,
    src: &[u8],
) -> (Vec<Definition>, usize, usize) {
    let root = tree.root_node();
    let whole = || (q.definitions(tree, src), 0, 0);
    let changed = changed_intervals(tree, edited, edits);
    let mut fresh: Vec<Node> = Vec::new();
    let mut seen: HashSet<usize> = HashSet::new();
    for &(lo, hi) in &changed {
        let range = (lo as usize, (hi as usize).min(root.end_byte()));
        for n in q.collect(root, src, Some(range), None) {
            if seen.insert(n.id()) {
                fresh.push(n);
            }
        }
    }
    let found: HashSet<(usize, usize, &str)> = fresh
        .iter()
        .map(|n| (n.start_byte(), n.end_byte(), n.kind()))
        .collect();
    let spans: Vec<Span> = old_defs
        .iter()
        .map(|d| Span {
            start_byte: d.start_byte,
            end_byte: d.end_byte,
            start_line: d.start_line,
            end_line: d.end_line,
        })
        .collect();
    let moved = carry_over(&spans, edits, &changed);
    let local = locals(old_defs);
    let mut entries: Vec<(Order, Entry)> = Vec::new();
    for (seq, ((d, place), loc)) in old_defs.iter().zip(moved).zip(local).enumerate() {
        let Some(p) = place else { continue };
        if found.contains(&(p.start_byte as usize, p.end_byte as usize, d.kind.as_str())) {
            continue; // found again by the restricted query (its match met a change)
        }
        if q.parent_dependent.contains(&d.kind) {
            let Some(node) = node_at(tree, &d.kind, p.start_byte, p.end_byte) else {
                return whole();
            };
            let Some(parent) = node.parent() else {
                return whole();
            };
            let k = changed.partition_point(|&(lo, _)| lo < parent.end_byte() as u64);
            if k > 0 && changed[k - 1].1 > parent.start_byte() as u64 {
                // The parent changed: whether a pattern rooted at it, or at the node itself,
                // still captures the node is asked again, and the node is named again.
                let again = q
                    .collect(parent, src, None, Some(0))
                    .into_iter()
                    .chain(q.collect(node, src, None, Some(0)))
                    .any(|c| c.id() == node.id());
                if again && seen.insert(node.id()) {
                    fresh.push(node);
                }
                continue;
            }
        }
        let kept = Definition {
            start_byte: p.start_byte,
            end_byte: p.end_byte,
            start_line: p.start_line,
            end_line: p.end_line,
            ..d.clone()
        };
        let key = (p.start_byte, std::cmp::Reverse(p.end_byte), 1, seq);
        entries.push((key, Entry::Kept(kept, loc)));
    }
    let reused = entries.len();
    let base = old_defs.len();
    for (i, n) in fresh.into_iter().enumerate() {
        let key = (
            n.start_byte() as u64,
            std::cmp::Reverse(n.end_byte() as u64),
            0,
            base + i,
        );
        entries.push((key, Entry::Found(n)));
    }
    entries.sort_by_key(|(key, _)| *key);
    for pair in entries.windows(2) {
        let ((a, _), (b, _)) = (&pair[0], &pair[1]);
        if a.0 == b.0 && a.1 == b.1 && (a.2 != b.2 || a.2 == 0) {
            return whole();
        }
    }
    (assemble(entries, src, q.naming), reused, changed.len())
}

/// [`build`] over found nodes and carried-over definitions, in order.
fn assemble(entries: Vec<(Order, Entry)>, src: &[u8], naming: Naming) -> Vec<Definition> {
    let mut out: Vec<Definition> = Vec::with_capacity(entries.len());
    let mut scopes = Scopes::default();
    let mut nested_at_start = false;
    for ((start, std::cmp::Reverse(end), _, _), entry) in entries {
        if let Some(prev) = out.last() {
            if prev.start_byte == start && prev.end_byte != end {
                nested_at_start = true;
            }
        }
        scopes.enter(start, end);
        out.push(match entry {
            Entry::Found(node) => make_definition(node, src, &mut scopes, naming),
            Entry::Kept(mut d, loc) => {
                if let Some(loc) = loc {
                    d.qualified_name = scopes.qualify(end, &loc);
                }
                d
            }
        });
    }
    if nested_at_start {
        out.sort_by_key(|d| (d.start_byte, d.end_byte));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::python;
    use super::*;

    fn chain(versions: &[&[u8]]) {
        let g = python();
        let mut parser = g.parser();
        let mut fresh = g.parser();
        for preset in ["strict", "contextbench"] {
            let mut prev: Option<(Vec<u8>, Tree, Vec<Definition>)> = None;
            for v in versions {
                let got = extract(
                    &g,
                    &mut parser,
                    v,
                    preset,
                    prev.as_ref().map(|(s, t, d)| Previous {
                        source: s,
                        tree: t,
                        defs: Some(d),
                    }),
                    Limits {
                        scratch_fraction: f64::INFINITY,
                        scratch_edits: usize::MAX,
                    },
                )
                .unwrap();
                assert_eq!(got.defs, g.extract(&mut fresh, v, preset).unwrap());
                prev = Some((v.to_vec(), got.tree, got.defs));
            }
        }
    }

    #[test]
    fn edits_inside_between_and_around_definitions() {
        chain(&[
            b"class A:\n    def f(self):\n        pass\n\ndef g():\n    return 1\n",
            b"class A:\n    def f(self):\n        return 2\n\ndef g():\n    return 1\n",
            b"import os\nclass A:\n    def f(self):\n        return 2\n\n\ndef g():\n    return 1\n",
            b"import os\nclass B:\n    def f(self):\n        return 2\n\n\ndef g():\n    return 1\n",
            b"import os\nclass B:\n    def f(self):\n        return 2\n    def h(self):\n        pass\n\ndef g():\n    return 1\n",
            b"import os\ndef g():\n    return 1\n",
            b"import os\ndef g(:\n    return 1\n",
            b"import os\ndef g():\n    return 1\n",
        ]);
    }

    #[test]
    fn qualified_names_follow_a_renamed_parent() {
        let g = python();
        let mut parser = g.parser();
        let v1 = b"class A:\n    def f(self):\n        pass\n";
        let v2 = b"class Z:\n    def f(self):\n        pass\n";
        let first = extract(&g, &mut parser, v1, "strict", None, DEFAULT_LIMITS).unwrap();
        let prev = Previous {
            source: v1,
            tree: &first.tree,
            defs: Some(&first.defs),
        };
        let limits = Limits {
            scratch_fraction: f64::INFINITY,
            scratch_edits: usize::MAX,
        };
        let got = extract(&g, &mut parser, v2, "strict", Some(prev), limits).unwrap();
        let names: Vec<&str> = got.defs.iter().map(|d| d.qualified_name.as_str()).collect();
        assert_eq!(names, ["Z", "Z.f"]);
    }

    #[test]
    fn locals_strip_the_enclosing_name() {
        let d = |q: &str, s, e| Definition {
            kind: "k".into(),
            name: String::new(),
            qualified_name: q.into(),
            start_line: 1,
            end_line: 1,
            start_byte: s,
            end_byte: e,
        };
        let defs = [d("A", 0, 10), d("A.f", 1, 5), d("", 6, 9), d("A.g", 7, 8)];
        assert_eq!(
            locals(&defs),
            vec![Some("A".into()), Some("f".into()), None, Some("g".into())]
        );
    }
}
