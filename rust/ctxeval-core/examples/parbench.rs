use ctxeval_core::definitions::extractor::{Extractor, Item};
use ctxeval_core::definitions::incremental::DEFAULT_LIMITS;
use ctxeval_core::definitions::{Grammar, Naming};
use std::time::Instant;
fn main() {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir("/tmp/blobs")
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.display().to_string(), std::fs::read(&p).unwrap())
        })
        .collect();
    files.sort();
    for th in [1usize, 2, 1, 2] {
        let mut g = Grammar::new(tree_sitter_python::LANGUAGE.into());
        g.add_preset(
            "strict",
            "(function_definition) @definition (class_definition) @definition",
            Naming::Own,
            [],
        )
        .unwrap();
        let x = Extractor::new(None, DEFAULT_LIMITS);
        x.add_grammar("python", g);
        let items: Vec<Item> = files
            .iter()
            .map(|(p, d)| Item {
                lang: "python",
                preset: "strict",
                key: p,
                data: d,
            })
            .collect();
        let t = Instant::now();
        let r = x.extract_many(&items, th);
        println!(
            "threads {th}: {:.3}s {}",
            t.elapsed().as_secs_f64(),
            r.len()
        );
    }
}
