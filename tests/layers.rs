//! The crate's import structure, read from the source: every module of `src/` sits in one layer
//! of the list in `src/lib.rs`'s doc comment and imports only modules of lower layers (its own
//! submodules and ancestors aside); no two modules (files) import each other through a cycle;
//! and README's Layout section names every module. Paths are read from `use` trees and from
//! `crate::`, `super::`, `self::` and child-module paths in the code, comments left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The library's modules (files under src/, not bin/), by path ("verify::replay"), with their text.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                if prefix.is_empty() && name == "bin" {
                    continue;
                }
                walk(&path, &[prefix, &[name]].concat(), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let segments = match name.as_str() {
                    "mod" => prefix.to_vec(),
                    "lib" if prefix.is_empty() => continue,
                    _ => [prefix, &[name]].concat(),
                };
                out.insert(segments.join("::"), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &[], &mut out);
    out
}

/// The text without comments (line comments, doc comments and block comments).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        if rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |i| &rest[i..]);
        } else if rest.starts_with("/*") {
            rest = rest.find("*/").map_or("", |i| &rest[i + 2..]);
        } else if rest.starts_with('"') {
            // A string literal: skipped whole (it may hold "//" or "::").
            let mut end = 1;
            let bytes = rest.as_bytes();
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            rest = rest.get(end + 1..).unwrap_or("");
        } else if let Some(len) = char_literal(rest) {
            // '"' would open a string above; a lifetime ('a) is no literal and stays.
            out.push_str("' '");
            rest = &rest[len..];
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The length of the char literal `text` starts with ('x', '\n', '\''), if it starts with one.
fn char_literal(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\'')?;
    let body = match rest.strip_prefix('\\') {
        Some(escaped) => 1 + escaped.find('\'')?,
        None => rest.chars().next()?.len_utf8(),
    };
    (rest[body..].starts_with('\'')).then_some(body + 2)
}

/// The flat paths of a `use` tree: "crate::a::{b, c::{d, self}}" gives crate::a::b,
/// crate::a::c::d and crate::a::c.
fn flatten(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else { return vec![tree.split(" as ").next().unwrap().to_string()] };
    let base = tree[..open].trim_end_matches("::");
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| match p {
            "self" => vec![base.to_string()],
            p => flatten(&format!("{base}::{p}")),
        })
        .collect()
}

/// The paths a module's code names: its `use` trees, and `crate::`/`super::`/`self::` paths and
/// paths starting with one of its child modules elsewhere in the code.
fn paths(text: &str) -> Vec<String> {
    let code = code(text);
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("use ") {
        let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric() && rest.as_bytes()[i - 1] != b'_';
        let after = &rest[i + 4..];
        let end = after.find(';').unwrap_or(after.len());
        if before_ok && !after.starts_with(['(', '<']) {
            out.extend(flatten(&after[..end]));
        }
        rest = &after[end.min(after.len())..];
    }
    let bytes = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if ident(bytes[i]) && (i == 0 || !ident(bytes[i - 1]) && bytes[i - 1] != b':') {
            let mut j = i;
            while j < bytes.len() && (ident(bytes[j]) || code[j..].starts_with("::")) {
                j += if bytes[j] == b':' { 2 } else { 1 };
            }
            let path = code[i..j].trim_end_matches("::");
            if path.contains("::") {
                out.push(path.to_string());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The module `path` (as written in `module`) names, if it is one of `known`: the longest known
/// prefix of its resolved form.
fn resolve(module: &str, path: &str, known: &BTreeMap<String, String>) -> Option<String> {
    let mut at: Vec<&str> = if module.is_empty() { Vec::new() } else { module.split("::").collect() };
    let mut segments = path.split("::").peekable();
    match *segments.peek()? {
        "crate" => {
            at.clear();
            segments.next();
        }
        "self" => {
            segments.next();
        }
        "super" => {
            while segments.peek() == Some(&"super") {
                at.pop()?;
                segments.next();
            }
        }
        child if known.contains_key(&[at.as_slice(), &[child]].concat().join("::")) => {}
        _ => return None,
    }
    let mut best = None;
    for s in segments {
        at.push(s);
        let name = at.join("::");
        if known.contains_key(&name) {
            best = Some(name);
        }
    }
    best
}

/// Module → the modules it imports (itself, its ancestors and descendants left out).
fn graph(known: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let related = |a: &str, b: &str| a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"));
    known
        .iter()
        .map(|(m, text)| {
            let targets = paths(text).iter().filter_map(|p| resolve(m, p, known)).filter(|t| !related(m, t)).collect();
            (m.clone(), targets)
        })
        .collect()
}

/// The layers of src/lib.rs's doc comment, lowest first: its "//! N. `a`, `b` — …" lines.
fn layers() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! "))
        .filter(|l| l.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
        .map(|l| {
            let names = l.split_once(". ").unwrap().1.split('—').next().unwrap();
            names.split('`').skip(1).step_by(2).map(str::to_string).collect()
        })
        .collect()
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap()
}

#[test]
fn every_module_imports_only_lower_layers() {
    let known = modules();
    let layers = layers();
    assert!(layers.len() >= 5, "src/lib.rs lists its layers as \"//! N. `module`, … — what\" lines: {layers:?}");
    let rank: BTreeMap<&str, usize> =
        layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |m| (m.as_str(), i))).collect();
    let tops: BTreeSet<&str> = known.keys().map(|m| top(m)).collect();
    let unlisted: Vec<&&str> = tops.iter().filter(|t| !rank.contains_key(**t)).collect();
    assert!(unlisted.is_empty(), "modules in no layer of src/lib.rs: {unlisted:?}");
    let listed_twice: Vec<&str> =
        rank.keys().copied().filter(|m| layers.iter().flatten().filter(|l| l == m).count() > 1).collect();
    assert!(listed_twice.is_empty(), "modules in two layers: {listed_twice:?}");
    let mut wrong = Vec::new();
    for (m, targets) in graph(&known) {
        for t in targets {
            let (a, b) = (top(&m), top(&t));
            if a != b && rank[a] <= rank[b] {
                wrong.push(format!("{m} imports {t} (layer {} imports layer {})", rank[a] + 1, rank[b] + 1));
            }
        }
    }
    assert!(wrong.is_empty(), "imports that are not from a lower layer:\n{}", wrong.join("\n"));
}

#[test]
fn no_module_imports_itself_through_others() {
    let known = modules();
    let g = graph(&known);
    // Depth-first search; a node met again on the current path closes a cycle.
    fn visit<'a>(
        n: &'a str,
        g: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, bool>,
        path: &mut Vec<&'a str>,
        cycles: &mut Vec<String>,
    ) {
        match state.get(n) {
            Some(true) => {
                let at = path.iter().position(|&m| m == n).unwrap();
                cycles.push([&path[at..], &[n]].concat().join(" -> "));
                return;
            }
            Some(false) => return,
            None => {}
        }
        state.insert(n, true);
        path.push(n);
        for t in g.get(n).into_iter().flatten() {
            visit(t, g, state, path, cycles);
        }
        path.pop();
        state.insert(n, false);
    }
    let (mut state, mut cycles) = (BTreeMap::new(), Vec::new());
    for n in g.keys() {
        visit(n, &g, &mut state, &mut Vec::new(), &mut cycles);
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_readers_see_every_import() {
    // The reader itself: a use tree, a child module, super and crate paths, comments left out.
    let known: BTreeMap<String, String> =
        ["a", "a::b", "a::c", "d", "d::e"].iter().map(|m| (m.to_string(), String::new())).collect();
    let text = "use crate::{d::e::{X, Y}, a::c};\n// use crate::d;\nfn f<'a>() { g('\"'); b::h(\"crate::d\"); }";
    let found: BTreeSet<String> = paths(text).iter().filter_map(|p| resolve("a", p, &known)).collect();
    assert_eq!(found, ["a::b", "a::c", "d::e"].iter().map(|s| s.to_string()).collect());
    assert_eq!(resolve("a::b", "super::c::g", &known).as_deref(), Some("a::c"));
    assert_eq!(resolve("a::b", "super::super::d::Z", &known).as_deref(), Some("d"));
    assert_eq!(resolve("a", "std::fs::read", &known), None);
}

#[test]
fn the_readme_layout_names_every_module() {
    let readme = std::fs::read_to_string(src().join("../README.md")).unwrap();
    let layout = readme.split("## Layout").nth(1).expect("README has a Layout section");
    let layout = layout.split("\n## ").next().unwrap();
    let known = modules();
    let missing: Vec<&String> = known
        .keys()
        .filter(|m| !m.is_empty())
        .filter(|m| {
            let last = m.rsplit("::").next().unwrap();
            let dir = m.replace("::", "/");
            !(layout.contains(&format!("`{last}.rs`"))
                || layout.contains(&format!("`{last}/`"))
                || layout.contains(&format!("`src/{dir}.rs`"))
                || layout.contains(&format!("`src/{dir}/`"))
                || layout.contains(&format!("`{dir}/`"))
                || layout.contains(&format!("`{dir}.rs`")))
        })
        .collect();
    assert!(missing.is_empty(), "modules README's Layout section does not name:\n{missing:?}");
}
