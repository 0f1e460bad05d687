// Parsing shared by the layout probes' build scripts: `include!`d by `tests/c/build.rs`
// (mlx5dv-raw against rdma-core) and `tests/soft-mlx5/build.rs` (soft-mlx5's uapi module
// against the kernel headers). Reads Rust declarations written one item or field a line
// (`pub struct X {`, `pub union X {`, `    pub field: T,`, `pub const NAME: T = ...;`,
// `pub type E = c_uint;`) and the exceptions files (see `tests/c/layout-exceptions.txt`).

#[derive(Default)]
struct Decl {
    is_union: bool,
    fields: Vec<String>,
    opaque: bool,
}

#[derive(Default)]
struct Exceptions {
    since: std::collections::BTreeMap<String, u32>,
    nested: std::collections::BTreeMap<String, (String, String)>,
    skip: std::collections::BTreeSet<String>,
    rename: std::collections::BTreeMap<String, String>,
    packed: std::collections::BTreeSet<String>,
}

fn parse_exceptions(text: &str) -> Exceptions {
    let mut exc = Exceptions::default();
    for line in text
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
    {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["since", name, version] => {
                exc.since
                    .insert(name.to_string(), version.parse().expect("since NAME VERSION"));
            }
            ["nested", rust, parent_kw, parent, path] => {
                exc.nested
                    .insert(rust.to_string(), (format!("{parent_kw} {parent}"), path.to_string()));
            }
            ["skip", name] => {
                exc.skip.insert(name.to_string());
            }
            ["packed", key] => {
                exc.packed.insert(key.to_string());
            }
            ["rename", key, cname] => {
                exc.rename.insert(key.to_string(), cname.to_string());
            }
            _ => panic!("layout-exceptions.txt: cannot read line `{line}`"),
        }
    }
    exc
}

fn ident_after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(prefix)?;
    let end = rest
        .find(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '#'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

fn parse_rust(
    src: &str,
    decls: &mut std::collections::BTreeMap<String, Decl>,
    order: &mut Vec<String>,
    consts: &mut Vec<String>,
    enums: &mut Vec<String>,
) {
    let mut current: Option<String> = None;
    for line in src.lines() {
        if let Some(name) = &current {
            if line.starts_with('}') {
                current = None;
            } else if let Some(field) = ident_after(line, "    pub ") {
                decls.get_mut(name).unwrap().fields.push(field.to_string());
            } else if line.starts_with("    ")
                && !line.trim_start().starts_with("//")
                && line.contains(':')
                && !line.starts_with("     ")
            {
                decls.get_mut(name).unwrap().opaque = true;
            }
            continue;
        }
        let (kind, name) = if let Some(n) = ident_after(line, "pub struct ") {
            (false, n)
        } else if let Some(n) = ident_after(line, "pub union ") {
            (true, n)
        } else {
            if let Some(n) = ident_after(line, "pub const ") {
                consts.push(n.to_string());
            } else if let Some(n) = ident_after(line, "pub type ") {
                if line.ends_with("= c_uint;") || line.ends_with("= c_int;") {
                    enums.push(n.to_string());
                }
            }
            continue;
        };
        if line.trim_end().ends_with('{') {
            decls.insert(
                name.to_string(),
                Decl {
                    is_union: kind,
                    ..Decl::default()
                },
            );
            order.push(name.to_string());
            current = Some(name.to_string());
        }
    }
}
