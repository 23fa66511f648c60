//! How a definition node is named: its own name, the scope written into that name, and the
//! ContextBench reference's heuristic name.
//!
//! The rules read only the node and its near relatives (fields, first named children, the
//! binding a function expression is assigned to), never the rest of the tree, so a definition
//! whose node is untouched by an edit keeps its name (which incremental re-parsing relies on;
//! [`is_parent_dependent`](super::Grammar) lists the kinds named after their parent).

use tree_sitter::Node;

/// Node types that hold a name themselves (the end of a C/C++ declarator chain, the first
/// named child of a definition without a `name` field).
const NAME_LEAVES: &[&str] = &[
    "identifier",
    "field_identifier",
    "property_identifier",
    "type_identifier",
    "simple_identifier",
    "constant",
    "name",
    "namespace_identifier",
    "operator_name",
    "destructor_name",
    "qualified_identifier",
    "scope_resolution",
    "scoped_identifier",
    "scoped_type_identifier",
    "primitive_type",
    "user_type",
    "string",
    "package_identifier",
];

/// JS/TS function and class expressions: named by the binding they are assigned to.
pub const BOUND_KINDS: &[&str] = &[
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
    "class",
];

/// Kinds whose name is not simply their `name` field (see [`proper_name`]).
const SPECIAL_KINDS: &[&str] = &[
    "arrow_function",
    "function_expression",
    "function",
    "generator_function",
    "class",
    "impl_item",
    "method_declaration",
    "type_declaration",
    "init_declaration",
    "type_alias_statement",
];

fn is_name_leaf(kind: &str) -> bool {
    NAME_LEAVES.contains(&kind)
}

/// Python's `str.isspace`: Unicode white space plus the information separators U+001C-U+001F,
/// so that names are trimmed exactly as the reading rules were first written and documented.
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn trim(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// The node's source text, decoded (invalid UTF-8 replaced) and trimmed; empty for no node.
pub fn text(node: Option<Node>, src: &[u8]) -> String {
    match node {
        None => String::new(),
        Some(n) => {
            let raw = src.get(n.start_byte()..n.end_byte()).unwrap_or_default();
            trim(&String::from_utf8_lossy(raw)).to_owned()
        }
    }
}

/// `A::B::f` / `A.B` -> components (C++ / Ruby / Rust scopes, Swift extensions); a name made
/// only of separators stays whole.
fn split_scope(text: &str) -> Vec<String> {
    let text = trim(text).trim_matches(|c| c == '\'' || c == '"' || c == '`');
    let parts: Vec<String> = text
        .replace("::", ".")
        .split('.')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    if parts.is_empty() && !text.is_empty() {
        return vec![text.to_owned()];
    }
    parts
}

fn first_named_child(node: Node) -> Option<Node> {
    node.named_child(0)
}

/// Follow C/C++ `declarator` fields down to the declared name.
fn declarator_name(node: Node) -> Option<Node> {
    let mut cur = Some(node);
    for _ in 0..32 {
        let n = cur?;
        if is_name_leaf(n.kind()) {
            return Some(n);
        }
        // parenthesized_declarator and friends have no field: take the first named child
        cur = n
            .child_by_field_name("declarator")
            .or_else(|| first_named_child(n));
    }
    None
}

/// The bare type name of `Foo<T>`, `*Foo`, `a::Foo`: for impls and Go receivers.
fn type_name(node: Option<Node>) -> Option<Node> {
    let mut cur = node;
    for _ in 0..16 {
        let n = cur?;
        match n.kind() {
            "type_identifier" | "identifier" | "primitive_type" => return Some(n),
            "scoped_type_identifier" | "qualified_type" => {
                return Some(n.child_by_field_name("name").unwrap_or(n))
            }
            _ => {}
        }
        cur = n.child_by_field_name("type").or_else(|| {
            let mut walk = n.walk();
            let found = n
                .named_children(&mut walk)
                .find(|c| c.kind() != "type_arguments");
            found
        });
    }
    cur
}

/// The field of a binding node that holds the name a function or class expression takes.
fn binding_field(parent_kind: &str) -> Option<&'static str> {
    Some(match parent_kind {
        "variable_declarator" => "name",
        "assignment_expression" => "left",
        "pair" => "key",
        "field_definition" => "property",
        "public_field_definition" => "name",
        _ => return None,
    })
}

/// `f` of `const f = () => ...`, `x.f = function ...`, `{f: () => ...}`; else the
/// expression's own name, or ''.
fn bound_name(node: Node, src: &[u8]) -> String {
    let own = node.child_by_field_name("name");
    if let Some(parent) = node.parent() {
        if let Some(field) = binding_field(parent.kind()) {
            if let Some(mut target) = parent.child_by_field_name(field) {
                if target.id() != node.id() {
                    let mut found = Some(target);
                    if target.kind() == "member_expression" {
                        found = target.child_by_field_name("property");
                    }
                    if let Some(t) = found {
                        target = t;
                        if is_name_leaf(target.kind()) || target.kind() == "property_identifier" {
                            let t = text(Some(target), src);
                            // A key of quotes only (`{'': f}`) names nothing.
                            return split_scope(&t).pop().unwrap_or_default();
                        }
                    }
                }
            }
        }
    }
    text(own, src)
}

/// (scope components written in the name itself, e.g. `H` of `H::add`; the name).
fn proper_name(node: Node, src: &[u8]) -> (Vec<String>, String) {
    let kind = node.kind();
    if kind == "impl_item" {
        // Rust: an impl is named after its type; `impl T for Foo` -> Foo
        let mut parts = split_scope(&text(type_name(node.child_by_field_name("type")), src));
        let name = parts.pop().unwrap_or_default();
        return (parts, name);
    }
    if kind == "method_declaration" {
        if let Some(receiver) = node.child_by_field_name("receiver") {
            // Go: func (s *Store) Delete -> Store
            let mut walk = receiver.walk();
            let param = receiver
                .named_children(&mut walk)
                .find(|c| c.kind() == "parameter_declaration");
            let owner = param
                .map(|p| text(type_name(p.child_by_field_name("type")), src))
                .unwrap_or_default();
            let scope = if owner.is_empty() {
                vec![]
            } else {
                vec![owner]
            };
            return (scope, text(node.child_by_field_name("name"), src));
        }
    }
    if BOUND_KINDS.contains(&kind) {
        return (vec![], bound_name(node, src));
    }
    if kind == "type_alias_statement" {
        // Python `type X[T] = ...`
        let ident = node.child_by_field_name("left").map(|left| {
            let mut walk = left.walk();
            let found = left
                .named_children(&mut walk)
                .find(|c| c.kind() == "identifier");
            found.unwrap_or(left)
        });
        return (vec![], text(ident, src));
    }
    if kind == "type_declaration" {
        // Go `type X ...` (one spec): named after the spec
        let mut walk = node.walk();
        let specs: Vec<Node> = node
            .named_children(&mut walk)
            .filter(|c| matches!(c.kind(), "type_spec" | "type_alias"))
            .collect();
        let name = if specs.len() == 1 {
            text(specs[0].child_by_field_name("name"), src)
        } else {
            String::new()
        };
        return (vec![], name);
    }
    let mut name_node = node.child_by_field_name("name");
    if name_node.is_none() {
        if let Some(declarator) = node.child_by_field_name("declarator") {
            name_node = declarator_name(declarator);
        }
    }
    if name_node.is_none() && kind == "init_declaration" {
        return (vec![], "init".to_owned());
    }
    if name_node.is_none() {
        let mut walk = node.walk();
        name_node = node
            .named_children(&mut walk)
            .find(|c| is_name_leaf(c.kind()));
    }
    if let Some(n) = name_node {
        if n.kind() == "destructor_name" {
            let t = text(Some(n), src);
            return (vec![], format!("~{}", trim(t.trim_start_matches('~'))));
        }
    }
    let mut parts = split_scope(&text(name_node, src));
    match parts.pop() {
        None => (vec![], String::new()),
        Some(name) => (parts, name),
    }
}

/// (scope components written in the name, name) of a definition node; the common case reads
/// only the `name` field.
pub fn local_name(node: Node, src: &[u8]) -> (Vec<String>, String) {
    if !SPECIAL_KINDS.contains(&node.kind()) {
        if let Some(name_node) = node.child_by_field_name("name") {
            let name = text(Some(name_node), src);
            if name.contains(':') || name.contains('.') || name_node.kind() == "destructor_name" {
                return proper_name(node, src);
            }
            return (vec![], name);
        }
    }
    proper_name(node, src)
}

/// The reference ranks identifier node types when a definition has no `name` field.
fn heuristic_rank(kind: &str) -> Option<u32> {
    Some(match kind {
        "identifier" => 0,
        "field_identifier" => 1,
        "property_identifier" => 2,
        "method_identifier" => 3,
        "type_identifier"
        | "scoped_identifier"
        | "namespace_identifier"
        | "constant_identifier" => 100,
        _ => return None,
    })
}

/// The name ContextBench gives a definition node (what its name matching compares).
///
/// The `name` field when there is one; otherwise, searching the `declarator` field (or the
/// node itself) in document order, the first `identifier` -- or failing that the first node of
/// the best remaining identifier type. So a Rust impl is named after the first identifier
/// inside it (often its first method or a parameter), a JS arrow function after its first
/// parameter, and a C++ method declared as `void add(int v)` inside a class after `v`. Empty
/// when no identifier is found (the reference then cannot match it by name).
pub fn heuristic_name(node: Node, src: &[u8]) -> String {
    if let Some(name_node) = node.child_by_field_name("name") {
        let name = text(Some(name_node), src);
        if !name.is_empty() {
            return name;
        }
    }
    let root = node.child_by_field_name("declarator").unwrap_or(node);
    let (mut best, mut best_rank) = (String::new(), None::<u32>);
    let mut stack = vec![root];
    let mut walk = root.walk();
    while let Some(cur) = stack.pop() {
        if let Some(rank) = heuristic_rank(cur.kind()) {
            if cur.is_named() && best_rank.is_none_or(|b| rank < b) {
                let t = text(Some(cur), src);
                if !t.is_empty() {
                    best = t;
                    best_rank = Some(rank);
                    if rank == 0 {
                        break;
                    }
                }
            }
        }
        let children: Vec<Node> = cur.children(&mut walk).collect();
        stack.extend(children.into_iter().rev());
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_split_on_both_separators() {
        assert_eq!(split_scope("A::B.f"), vec!["A", "B", "f"]);
        assert_eq!(split_scope(" 'x' "), vec!["x"]);
        assert_eq!(split_scope("::"), vec!["::"]);
        assert!(split_scope("''").is_empty());
        assert!(split_scope("").is_empty());
    }

    #[test]
    fn trimming_follows_python_isspace() {
        assert_eq!(trim("\u{1f} f\u{a0}\u{3000}"), "f");
        assert_eq!(trim("\u{200b}f"), "\u{200b}f");
    }
}
