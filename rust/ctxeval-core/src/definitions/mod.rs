//! Definitions (symbols) found by tree-sitter: the unit of the `symbol` granularity.
//!
//! A definition is identified by (file, kind, start byte, end byte), where `kind` is the
//! tree-sitter node type. Which node types count is a query per language and preset (the
//! `queries/<lang>.scm` files of the Python package, handed over as text); names come from the
//! node ([`names`]), qualified names from the nesting of the definitions ([`build`]).
//!
//! Everything here runs without Python, so extraction can run on many threads at once and
//! `cargo test` covers it. The grammars are whatever [`tree_sitter::Language`] the caller gives:
//! the Python layer passes the languages of the installed grammar packages, so that the
//! grammar versions are the ones the package declares and records in its cache keys.
//!
//! [`incremental`] re-parses a new version of a file from the tree of an earlier one and
//! re-uses the definitions the edits left alone; the result is identical to [`Grammar::extract`].

pub mod extractor;
pub mod incremental;
pub mod names;

use std::collections::HashSet;

use tree_sitter::{Node, Parser, Query, QueryCursor, StreamingIterator, Tree};

/// Makes the tree-sitter runtime allocate with mimalloc instead of the C library's malloc.
///
/// Parsing allocates and frees millions of small nodes; with glibc's malloc that is about a
/// tenth of an extraction (and freeing a large tree consolidates the heap), with mimalloc much
/// less. It must run before the runtime allocates anything in this process (a tree allocated
/// by one allocator and freed by the other is a crash): the Python module calls it when it
/// loads. Later calls do nothing.
///
/// mimalloc is built without its request for transparent huge pages (`no_thp`, Cargo.toml):
/// with it, the kernel zeroes 2 MiB at the first touch of each arena page, and whether a huge
/// page is at hand varies from run to run, so a cold extraction of the real-history benchmark
/// spent 0.02 to 0.25 s of system time zeroing pages (0.09 s on average; 0.045 s without).
pub fn use_mimalloc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: called once, before any tree-sitter allocation of this process (see above);
        // mimalloc's functions have the C allocator's contracts.
        unsafe {
            tree_sitter::set_allocator(
                Some(libmimalloc_sys::mi_malloc),
                Some(libmimalloc_sys::mi_calloc),
                Some(libmimalloc_sys::mi_realloc),
                Some(libmimalloc_sys::mi_free),
            );
        }
    });
}

/// One definition node; lines are 1-based inclusive, bytes 0-based half-open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub kind: String,
    pub name: String,
    pub qualified_name: String,
    pub start_line: u64,
    pub end_line: u64,
    pub start_byte: u64,
    pub end_byte: u64,
}

/// How definitions are named: ctxeval's own names, or the ContextBench reference's heuristic
/// name in `name` (what its name matching compares; `qualified_name` stays ctxeval's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    Own,
    Heuristic,
}

/// One preset's query of a language, and the node types whose being a definition, or whose
/// name, may depend on their parent node (see [`incremental`]).
pub struct PresetQuery {
    pub query: Query,
    pub naming: Naming,
    pub parent_dependent: HashSet<String>,
    capture: u32,
    /// How a whole tree is searched without running the query over every node.
    roots: Option<Roots>,
}

/// What a grammar says of its node kinds (its `node-types.json`, through the Python
/// package's `queries/<lang>.kinds`): the walk of a tree goes down only into the nodes under
/// which a definition may be (see [`Grammar::set_node_types`]).
#[derive(Clone, Debug, Default)]
pub struct NodeTypes {
    /// Every named node kind of the grammar, with the named kinds its children may have
    /// (supertypes already replaced by their subtypes).
    pub kinds: Vec<(String, Vec<String>)>,
    /// Named kinds that may appear as a child of any node (comments: the grammar's extras).
    pub extras: Vec<String>,
}

impl NodeTypes {
    /// Per kind id, whether the walk must look below a node of that kind: its subtree may hold
    /// a node of a `sought` kind (by name). `None` (every node is looked below) when the kinds
    /// are not this language's (none is listed, or a listed kind is not a visible named kind
    /// of the language: another grammar version), or when an extra may hold a sought kind (an extra may be
    /// anywhere). A kind named as a child but not listed itself (an alias of another rule:
    /// Python's `as_pattern_target`) may hold anything. Anonymous kinds, and named kinds that
    /// are not listed, are always looked below (a token has no children; the language's kinds
    /// no rule reaches, such as an external scanner's sentinel, are in no tree).
    fn descend(
        &self,
        language: &tree_sitter::Language,
        sought: &HashSet<&str>,
    ) -> Option<Vec<bool>> {
        let n = language.node_kind_count();
        let visible: HashSet<&str> = (0..n as u16)
            .filter(|&id| language.node_kind_is_named(id) && language.node_kind_is_visible(id))
            .filter_map(|id| language.node_kind_for_id(id))
            .collect();
        let listed: HashSet<&str> = self.kinds.iter().map(|(k, _)| k.as_str()).collect();
        if listed.is_empty() || !listed.is_subset(&visible) {
            return None;
        }
        // kinds whose subtree may hold a sought kind below the node itself: to a fixed point
        let mut holds: HashSet<&str> = HashSet::new();
        let may_hold = |c: &str, holds: &HashSet<&str>| {
            sought.contains(c) || holds.contains(c) || !listed.contains(c)
        };
        loop {
            let before = holds.len();
            for (kind, children) in &self.kinds {
                if !holds.contains(kind.as_str())
                    && children.iter().any(|c| may_hold(c.as_str(), &holds))
                {
                    holds.insert(kind.as_str());
                }
            }
            if holds.len() == before {
                break;
            }
        }
        if self.extras.iter().any(|e| may_hold(e.as_str(), &holds)) {
            return None;
        }
        Some(
            (0..n as u16)
                .map(|id| {
                    !language.node_kind_is_named(id)
                        || language
                            .node_kind_for_id(id)
                            .is_none_or(|k| !listed.contains(k) || holds.contains(k))
                })
                .collect(),
        )
    }
}

/// The node kinds (by kind id) at which the query's patterns are rooted. A query cursor runs
/// its matching state machine at every node of the tree, which costs about a third of the
/// parse; most patterns are a bare `(kind) @definition`, which a walk of the tree answers
/// by comparing kind ids, and the others need the query only at nodes of their root kind.
struct Roots {
    /// Kind ids matched by a bare `(kind) @definition` pattern.
    bare: Vec<bool>,
    /// Kind ids at which some other pattern is rooted: the query is run there, no deeper
    /// than that node (`max_start_depth` 0).
    rooted: Vec<bool>,
    /// Kind ids below which a root may be ([`NodeTypes::descend`]); `None`: every node.
    descend: Option<Vec<bool>>,
}

impl Roots {
    /// The roots of every pattern of `query` (compiled from `source`); `None` when a pattern
    /// is not of a shape read here (then the query itself searches the tree).
    fn new(language: &tree_sitter::Language, query: &Query, source: &str) -> Option<Self> {
        let n = language.node_kind_count();
        let (mut bare, mut rooted) = (vec![false; n], vec![false; n]);
        for i in 0..query.pattern_count() {
            if !query.is_pattern_rooted(i) {
                return None;
            }
            let text =
                source.get(query.start_byte_for_pattern(i)..query.end_byte_for_pattern(i))?;
            let compact: String = text
                .lines()
                .map(|l| l.split(';').next().unwrap_or_default())
                .collect::<Vec<&str>>()
                .join(" ")
                .split_whitespace()
                .collect::<Vec<&str>>()
                .join(" ");
            let rest = compact.strip_prefix('(')?;
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let kind = &rest[..end];
            if kind.is_empty() || kind == "_" {
                return None;
            }
            let is_bare = rest[end..].replace(' ', "") == ")@definition";
            let ids: Vec<usize> = (0..n)
                .filter(|&id| {
                    let id = id as u16;
                    language.node_kind_is_named(id) && language.node_kind_for_id(id) == Some(kind)
                })
                .collect();
            if ids.is_empty() {
                return None;
            }
            for id in ids {
                if is_bare {
                    bare[id] = true;
                } else {
                    rooted[id] = true;
                }
            }
        }
        Some(Self {
            bare,
            rooted,
            descend: None,
        })
    }

    /// The names of the kinds the walk looks for.
    fn sought<'a>(&self, language: &'a tree_sitter::Language) -> HashSet<&'a str> {
        (0..self.bare.len())
            .filter(|&id| self.bare[id] || self.rooted[id])
            .filter_map(|id| language.node_kind_for_id(id as u16))
            .collect()
    }
}

/// A language's grammar and its presets' queries.
pub struct Grammar {
    pub language: tree_sitter::Language,
    presets: Vec<(String, PresetQuery)>,
    node_types: Option<NodeTypes>,
}

/// A query that does not compile, or lacks the `@definition` capture.
#[derive(Debug)]
pub struct GrammarError(pub String);

impl std::fmt::Display for GrammarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GrammarError {}

impl Grammar {
    pub fn new(language: tree_sitter::Language) -> Self {
        Self {
            language,
            presets: Vec::new(),
            node_types: None,
        }
    }

    /// What the grammar says of its node kinds: from then on, a preset's walk of a tree goes
    /// down only into the nodes whose subtree may hold one of the kinds it looks for (or that
    /// hold a syntax error, where error recovery may have put anything), when the kinds are
    /// this language's (see [`NodeTypes::descend`]). The definitions found are the same.
    pub fn set_node_types(&mut self, node_types: NodeTypes) {
        for (_, q) in &mut self.presets {
            if let Some(roots) = &mut q.roots {
                roots.descend = node_types.descend(&self.language, &roots.sought(&self.language));
            }
        }
        self.node_types = Some(node_types);
    }

    /// Whether `preset`'s walk skips subtrees (see [`Self::set_node_types`]).
    pub fn prunes(&self, preset: &str) -> bool {
        self.preset(preset)
            .and_then(|q| q.roots.as_ref())
            .is_some_and(|r| r.descend.is_some())
    }

    /// Adds a preset: its query source (every `@definition` capture is a definition), how its
    /// definitions are named, and its parent-dependent node types.
    pub fn add_preset(
        &mut self,
        preset: &str,
        source: &str,
        naming: Naming,
        parent_dependent: impl IntoIterator<Item = String>,
    ) -> Result<(), GrammarError> {
        let query = Query::new(&self.language, source)
            .map_err(|e| GrammarError(format!("query of preset {preset}: {e}")))?;
        let capture = query
            .capture_index_for_name("definition")
            .ok_or_else(|| GrammarError(format!("query of preset {preset} has no @definition")))?;
        let mut dependent: HashSet<String> = parent_dependent.into_iter().collect();
        dependent.extend(names::BOUND_KINDS.iter().map(|k| (*k).to_owned()));
        let mut roots = Roots::new(&self.language, &query, source);
        if let (Some(r), Some(nt)) = (&mut roots, &self.node_types) {
            r.descend = nt.descend(&self.language, &r.sought(&self.language));
        }
        self.presets.retain(|(p, _)| p != preset);
        self.presets.push((
            preset.to_owned(),
            PresetQuery {
                query,
                naming,
                parent_dependent: dependent,
                capture,
                roots,
            },
        ));
        Ok(())
    }

    /// Whether a whole tree is searched by a walk (every pattern's root kind known), not by
    /// running the query over every node.
    pub fn walks(&self, preset: &str) -> bool {
        self.preset(preset).is_some_and(|q| q.roots.is_some())
    }

    pub fn preset(&self, preset: &str) -> Option<&PresetQuery> {
        self.presets
            .iter()
            .find(|(p, _)| p == preset)
            .map(|(_, q)| q)
    }

    /// A parser of this grammar (parsers are not shared between threads).
    pub fn parser(&self) -> Parser {
        let mut parser = Parser::new();
        parser
            .set_language(&self.language)
            .expect("a language the runtime loaded once loads again");
        parser
    }

    /// The definitions of `src` from scratch, sorted by (start byte, end byte); `None` when
    /// the preset is unknown or tree-sitter gave no tree.
    pub fn extract(
        &self,
        parser: &mut Parser,
        src: &[u8],
        preset: &str,
    ) -> Option<Vec<Definition>> {
        let q = self.preset(preset)?;
        let tree = parser.parse(src, None)?;
        Some(q.definitions(&tree, src))
    }
}

impl PresetQuery {
    /// The definitions of a parsed tree: the captured nodes, then names through the nesting.
    pub fn definitions(&self, tree: &Tree, src: &[u8]) -> Vec<Definition> {
        build(&self.collect_all(tree.root_node(), src), src, self.naming)
    }

    /// Every captured definition node of the tree under `root`: by a walk of the tree and
    /// the query at the roots of its patterns (see [`Roots`]), or by the query.
    pub(crate) fn collect_all<'t>(&self, root: Node<'t>, src: &[u8]) -> Vec<Node<'t>> {
        let Some(roots) = &self.roots else {
            return self.collect(root, src, None, None);
        };
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let id = node.kind_id() as usize;
            if roots.bare.get(id).copied().unwrap_or(false) && seen.insert(node.id()) {
                out.push(node);
            }
            if roots.rooted.get(id).copied().unwrap_or(false) {
                for n in self.collect(node, src, None, Some(0)) {
                    if seen.insert(n.id()) {
                        out.push(n);
                    }
                }
            }
            let below = roots
                .descend
                .as_ref()
                .is_none_or(|d| d.get(id).copied().unwrap_or(true) || node.has_error());
            if below && cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return out;
                }
            }
        }
    }

    /// The captured definition nodes under `root` (each once), restricted to the matches
    /// meeting `range` and to patterns rooted at most `max_depth` below `root` when given.
    pub(crate) fn collect<'t>(
        &self,
        root: Node<'t>,
        src: &[u8],
        range: Option<(usize, usize)>,
        max_depth: Option<u32>,
    ) -> Vec<Node<'t>> {
        let mut cursor = QueryCursor::new();
        if let Some((lo, hi)) = range {
            cursor.set_byte_range(lo..hi);
        }
        cursor.set_max_start_depth(max_depth);
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut captures = cursor.captures(&self.query, root, src);
        while let Some((m, i)) = captures.next() {
            let c = m.captures[*i];
            if c.index == self.capture && seen.insert(c.node.id()) {
                out.push(c.node);
            }
        }
        out
    }
}

/// Key that puts outer definitions first: by start, then longest, then (same range) the
/// shallower node, so that a node and its descendant of the same bytes nest that way.
fn outer_first(node: &Node) -> (usize, std::cmp::Reverse<usize>) {
    (node.start_byte(), std::cmp::Reverse(node.end_byte()))
}

fn depth(node: Node) -> usize {
    let mut d = 0;
    let mut cur = node;
    while let Some(p) = cur.parent() {
        d += 1;
        cur = p;
    }
    d
}

/// Sorts nodes outer first; nodes of one byte range (rare: a node and its only child) by
/// depth, then id, so the order never depends on how the query returned them.
pub(crate) fn sort_outer_first(nodes: &mut [Node]) {
    nodes.sort_by_key(outer_first);
    let mut i = 0;
    while i < nodes.len() {
        let mut j = i + 1;
        while j < nodes.len() && outer_first(&nodes[j]) == outer_first(&nodes[i]) {
            j += 1;
        }
        if j - i > 1 {
            nodes[i..j].sort_by_key(|n| (depth(*n), n.id()));
        }
        i = j;
    }
}

/// The scopes open at a point of an outer-first walk: (end byte, qualified name).
#[derive(Default)]
pub(crate) struct Scopes(Vec<(u64, String)>);

impl Scopes {
    /// Closes the scopes that do not contain `start..end` (outer first, so an open scope
    /// contains a definition iff the definition ends inside it).
    pub(crate) fn enter(&mut self, start: u64, end: u64) {
        while let Some((top_end, _)) = self.0.last() {
            if start >= *top_end || end > *top_end {
                self.0.pop();
            } else {
                break;
            }
        }
    }

    /// `local` qualified through the innermost open scope, which it then opens itself.
    pub(crate) fn qualify(&mut self, end: u64, local: &str) -> String {
        let qualified = match self.0.last() {
            Some((_, parent)) => format!("{parent}.{local}"),
            None => local.to_owned(),
        };
        self.0.push((end, qualified.clone()));
        qualified
    }
}

/// The definition of `node`, qualified through the open `scopes`, which it joins when it is
/// named. An anonymous definition has no qualified name; what it contains is qualified
/// through its named ancestors.
pub(crate) fn make_definition(
    node: Node,
    src: &[u8],
    scopes: &mut Scopes,
    naming: Naming,
) -> Definition {
    let (start, end) = (node.start_byte() as u64, node.end_byte() as u64);
    let (scope, name) = names::local_name(node, src);
    let qualified = if name.is_empty() {
        String::new()
    } else {
        let local = if scope.is_empty() {
            name.clone()
        } else {
            format!("{}.{name}", scope.join("."))
        };
        scopes.qualify(end, &local)
    };
    let (start_row, end_point) = (node.start_position().row as u64, node.end_position());
    let end_row = end_point.row as u64;
    // A node ending at a line's first column ends on the line before.
    let end_line = if end_point.column == 0 && end_row > start_row {
        end_row
    } else {
        end_row + 1
    };
    Definition {
        kind: node.kind().to_owned(),
        name: match naming {
            Naming::Own => name,
            Naming::Heuristic => names::heuristic_name(node, src),
        },
        qualified_name: qualified,
        start_line: start_row + 1,
        end_line,
        start_byte: start,
        end_byte: end,
    }
}

/// Definitions with qualified names from the nesting of the captured nodes, sorted by
/// (start byte, end byte).
pub fn build(nodes: &[Node], src: &[u8], naming: Naming) -> Vec<Definition> {
    let mut order = nodes.to_vec();
    sort_outer_first(&mut order);
    let mut scopes = Scopes::default();
    let mut nested_at_start = false;
    let mut out: Vec<Definition> = Vec::with_capacity(order.len());
    for node in order {
        let (start, end) = (node.start_byte() as u64, node.end_byte() as u64);
        if let Some(prev) = out.last() {
            if prev.start_byte == start && prev.end_byte != end {
                nested_at_start = true;
            }
        }
        scopes.enter(start, end);
        out.push(make_definition(node, src, &mut scopes, naming));
    }
    if nested_at_start {
        out.sort_by_key(|d| (d.start_byte, d.end_byte));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn python() -> Grammar {
        let mut g = Grammar::new(tree_sitter_python::LANGUAGE.into());
        g.add_preset(
            "strict",
            "(function_definition) @definition (class_definition) @definition",
            Naming::Own,
            [],
        )
        .unwrap();
        g.add_preset(
            "contextbench",
            "(function_definition) @definition (class_definition) @definition",
            Naming::Heuristic,
            [],
        )
        .unwrap();
        g
    }

    fn table(defs: &[Definition]) -> Vec<(String, String, u64, u64)> {
        defs.iter()
            .map(|d| {
                (
                    d.kind.clone(),
                    d.qualified_name.clone(),
                    d.start_line,
                    d.end_line,
                )
            })
            .collect()
    }

    #[test]
    fn python_nesting_and_lines() {
        let g = python();
        let src = b"class A:\n    def f(self):\n        pass\n\n    class B:\n        def g(self): pass\n\ndef h():\n    def inner(): pass\n";
        let defs = g.extract(&mut g.parser(), src, "strict").unwrap();
        let t = |k: &str, q: &str, a, b| (k.to_owned(), q.to_owned(), a, b);
        assert_eq!(
            table(&defs),
            vec![
                t("class_definition", "A", 1, 6),
                t("function_definition", "A.f", 2, 3),
                t("class_definition", "A.B", 5, 6),
                t("function_definition", "A.B.g", 6, 6),
                t("function_definition", "h", 8, 9),
                t("function_definition", "h.inner", 9, 9),
            ]
        );
        assert_eq!(defs[1].name, "f");
        assert_eq!(
            &src[defs[1].start_byte as usize..defs[1].end_byte as usize],
            b"def f(self):\n        pass"
        );
    }

    #[test]
    fn unknown_preset_and_missing_capture() {
        let g = python();
        assert!(g.extract(&mut g.parser(), b"x = 1\n", "nope").is_none());
        let mut bad = Grammar::new(tree_sitter_python::LANGUAGE.into());
        assert!(bad
            .add_preset("strict", "(function_definition) @fn", Naming::Own, [])
            .is_err());
        assert!(bad
            .add_preset("strict", "(no_such_node) @definition", Naming::Own, [])
            .is_err());
    }

    #[test]
    fn the_walk_finds_what_the_query_finds() {
        // Bare patterns, a pattern with a field constraint, a capture below the root, and a
        // multi-line pattern with a comment.
        let source = "(function_definition) @definition
            (class_definition body: (block)) @definition
            (decorated_definition
              ; a decorated function, captured through its decorator
              definition: (function_definition) @definition)
            (assignment left: (identifier) right: (lambda) @definition)";
        let mut g = Grammar::new(tree_sitter_python::LANGUAGE.into());
        g.add_preset("strict", source, Naming::Own, []).unwrap();
        assert!(g.walks("strict"));
        let src = b"@d\ndef f():\n    g = lambda: 1\n    class C:\n        @e\n        def m(self): pass\nclass D: pass\nh = lambda x: x\n";
        let tree = g.parser().parse(src, None).unwrap();
        let q = g.preset("strict").unwrap();
        let ids = |mut v: Vec<Node>| {
            v.sort_by_key(|n| n.id());
            v.into_iter()
                .map(|n| (n.kind(), n.start_byte(), n.end_byte()))
                .collect::<Vec<_>>()
        };
        let walked = ids(q.collect_all(tree.root_node(), src));
        assert_eq!(walked, ids(q.collect(tree.root_node(), src, None, None)));
        assert_eq!(walked.len(), 6); // f (twice: bare and decorated), g, C, m, D, h
                                     // A pattern rooted at an alternation is not read: the query searches instead.
        let mut alt = Grammar::new(tree_sitter_python::LANGUAGE.into());
        alt.add_preset(
            "strict",
            "[(function_definition) (class_definition)] @definition",
            Naming::Own,
            [],
        )
        .unwrap();
        assert!(!alt.walks("strict"));
    }

    #[test]
    fn heuristic_names_take_the_name_field() {
        let g = python();
        let defs = g
            .extract(&mut g.parser(), b"def f(a):\n  pass\n", "contextbench")
            .unwrap();
        assert_eq!(defs[0].name, "f");
    }

    /// The node types of the tests' Python grammar, from its node-types.json as the Python
    /// package's `ctxeval.truth.node_types` reads them: supertypes replaced by their
    /// subtypes, extras from the grammar's `extras`.
    fn python_node_types() -> NodeTypes {
        type Supers = std::collections::HashMap<String, Vec<String>>;
        fn concrete(k: &str, supers: &Supers) -> Vec<String> {
            match supers.get(k) {
                Some(subs) => subs.iter().flat_map(|s| concrete(s, supers)).collect(),
                None => vec![k.to_owned()],
            }
        }
        let all: Vec<serde_json::Value> =
            serde_json::from_str(tree_sitter_python::NODE_TYPES).unwrap();
        let named = |t: &serde_json::Value| t["named"].as_bool().unwrap_or(false);
        let name = |t: &serde_json::Value| t["type"].as_str().unwrap().to_owned();
        let mut supers = Supers::new();
        for t in all
            .iter()
            .filter(|t| named(t) && t.get("subtypes").is_some())
        {
            let subs = t["subtypes"].as_array().unwrap();
            supers.insert(
                name(t),
                subs.iter().filter(|s| named(s)).map(name).collect(),
            );
        }
        let mut kinds = Vec::new();
        for t in all
            .iter()
            .filter(|t| named(t) && t.get("subtypes").is_none())
        {
            let mut children: Vec<String> = Vec::new();
            let mut add = |types: &serde_json::Value| {
                for c in types.as_array().unwrap().iter().filter(|c| named(c)) {
                    children.extend(concrete(c["type"].as_str().unwrap(), &supers));
                }
            };
            if let Some(fields) = t.get("fields").and_then(|f| f.as_object()) {
                for f in fields.values() {
                    add(&f["types"]);
                }
            }
            if let Some(c) = t.get("children") {
                add(&c["types"]);
            }
            children.sort();
            children.dedup();
            kinds.push((name(t), children));
        }
        // `as_pattern_target` is `expression` renamed (an alias node-types.json names as a
        // child and does not list): it holds the concrete expression, as the generator of the
        // Python package's `.kinds` files reads grammar.json
        kinds.push(("as_pattern_target".into(), concrete("expression", &supers)));
        NodeTypes {
            kinds,
            extras: vec!["comment".into(), "line_continuation".into()],
        }
    }

    /// Definitions everywhere they can be: nested in classes, functions and every compound
    /// statement, decorated, as type aliases, and inside syntax errors (error recovery can
    /// leave a definition under an expression).
    const PRUNE_SOURCES: &[&str] = &[
        r#"import os

@dec(1)
def f(a, b=lambda x: x):
    """doc"""
    def g():
        class L:
            def m(self): pass
    return [g for _ in range(3)]

class C(Base, metaclass=M):
    x = {'k': [1, 2]}
    if x:
        def a(self): pass
    elif y:
        def a2(self): pass
    else:
        async def b(self): pass
    try:
        def c(): pass
    except E:
        def d(): pass
    finally:
        def e(): pass
    with open(p) as fh:
        def w(): pass
    for i in x:
        def fo(): pass
    while x:
        def wh(): pass
    match x:
        case 1:
            def ma(): pass
type Alias = dict[str, int]
"#,
        "x = foo(\ndef broken():\n    pass\n\nclass K:\n    def ok(self): pass\n",
        "print(f'{(lambda: 1)()}')\nvalue = [\n  def inside(): pass\n]\ndef after(): pass\n",
        "def f(:\n  def g(): pass\n  return g\n",
        "",
    ];

    fn with_node_types(node_types: Option<NodeTypes>, first: bool) -> Grammar {
        let mut g = Grammar::new(tree_sitter_python::LANGUAGE.into());
        if let (true, Some(nt)) = (first, &node_types) {
            g.set_node_types(nt.clone());
        }
        for (preset, naming) in [("strict", Naming::Own), ("contextbench", Naming::Heuristic)] {
            g.add_preset(
                preset,
                "(function_definition) @definition (class_definition) @definition \
                 (type_alias_statement) @definition",
                naming,
                [],
            )
            .unwrap();
        }
        if let (false, Some(nt)) = (first, node_types) {
            g.set_node_types(nt);
        }
        g
    }

    fn same_definitions(pruned: &Grammar, whole: &Grammar, sources: &[&[u8]]) {
        for src in sources {
            for preset in ["strict", "contextbench"] {
                let a = pruned.extract(&mut pruned.parser(), src, preset).unwrap();
                let b = whole.extract(&mut whole.parser(), src, preset).unwrap();
                assert_eq!(a, b, "{preset}: {}", String::from_utf8_lossy(src));
            }
        }
    }

    #[test]
    fn the_pruned_walk_finds_what_the_whole_walk_finds() {
        let whole = with_node_types(None, false);
        let first = PRUNE_SOURCES[0].as_bytes();
        let mut sources: Vec<Vec<u8>> = PRUNE_SOURCES
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        // and the first source with 13 bytes cut out at every 7th byte: errors everywhere
        for cut in (0..first.len()).step_by(7) {
            sources.push([&first[..cut], &first[(cut + 13).min(first.len())..]].concat());
        }
        let sources: Vec<&[u8]> = sources.iter().map(|s| s.as_slice()).collect();
        for set_first in [true, false] {
            let pruned = with_node_types(Some(python_node_types()), set_first);
            assert!(pruned.prunes("strict") && pruned.prunes("contextbench"));
            same_definitions(&pruned, &whole, &sources);
        }
        assert!(!whole.prunes("strict"));
        let defs = whole.extract(&mut whole.parser(), first, "strict").unwrap();
        assert_eq!(defs.len(), 16); // f g L m C a a2 b c d e w fo wh ma Alias
    }

    #[test]
    fn node_types_that_do_not_fit_leave_the_walk_whole() {
        // a kind the language does not have: another grammar's (version's) node types
        let mut other = python_node_types();
        other.kinds.push(("no_such_kind".into(), vec![]));
        assert!(!with_node_types(Some(other), false).prunes("strict"));
        // an extra that may hold a definition (an extra may be in any node)
        let mut extra = python_node_types();
        extra.extras.push("block".into());
        assert!(!with_node_types(Some(extra), false).prunes("strict"));
        assert!(with_node_types(Some(python_node_types()), false).prunes("strict"));
        // nothing listed: nothing known
        assert!(!with_node_types(Some(NodeTypes::default()), false).prunes("strict"));
    }

    #[test]
    fn a_kind_named_as_a_child_but_not_listed_may_hold_anything() {
        // without its own entry, `block` may hold anything: what holds a block is walked
        let mut nt = python_node_types();
        nt.kinds.retain(|(k, _)| k != "block");
        let pruned = with_node_types(Some(nt), false);
        assert!(pruned.prunes("strict"));
        let whole = with_node_types(None, false);
        let sources: Vec<&[u8]> = PRUNE_SOURCES.iter().map(|s| s.as_bytes()).collect();
        same_definitions(&pruned, &whole, &sources);
        // node types that said a class holds nothing would lose its methods: the walk does
        // skip what they say cannot hold a definition
        let mut wrong = python_node_types();
        for (k, children) in &mut wrong.kinds {
            if k == "class_definition" {
                children.clear();
            }
        }
        let wrong = with_node_types(Some(wrong), false);
        let src = b"class C:\n    def m(self): pass\n";
        assert_eq!(
            wrong
                .extract(&mut wrong.parser(), src, "strict")
                .unwrap()
                .len(),
            1
        );
        assert_eq!(
            whole
                .extract(&mut whole.parser(), src, "strict")
                .unwrap()
                .len(),
            2
        );
    }
}
