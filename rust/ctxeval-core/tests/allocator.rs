//! Extraction with the tree-sitter runtime switched to mimalloc (as the Python module runs
//! it), in a test binary of its own: the switch must come before any tree-sitter allocation.

use ctxeval_core::definitions::extractor::{Extractor, Item};
use ctxeval_core::definitions::incremental::DEFAULT_LIMITS;
use ctxeval_core::definitions::{use_mimalloc, Grammar, Naming};

#[test]
fn extraction_runs_on_mimalloc() {
    use_mimalloc();
    use_mimalloc(); // later calls do nothing
    let mut g = Grammar::new(tree_sitter_python::LANGUAGE.into());
    g.add_preset(
        "strict",
        "(function_definition) @definition",
        Naming::Own,
        [],
    )
    .unwrap();
    let x = Extractor::new(Some(1 << 20), DEFAULT_LIMITS);
    x.add_grammar("python", g);
    let versions: Vec<Vec<u8>> = (1..40)
        .map(|k| {
            (0..k)
                .map(|i| format!("def f{i}():\n    pass\n"))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    let items: Vec<Item> = versions
        .iter()
        .map(|v| Item {
            lang: "python",
            preset: "strict",
            key: "a.py",
            data: v,
        })
        .collect();
    for (k, got) in x.extract_many(&items, 2).into_iter().enumerate() {
        let defs = got.unwrap();
        assert_eq!(defs.len(), k + 1);
        assert_eq!(defs.last().unwrap().name, format!("f{k}"));
    }
}
