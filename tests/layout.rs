//! Layout regression tests: every struct, field, constant and enum that mlx5dv-raw declares,
//! compared with what the C compiler says for the real rdma-core headers under test.
//!
//! Which headers: `MLX5DV_LAYOUT_INCLUDE_DIR` (default: the ones mlx5dv-raw was built with);
//! `scripts/layout-matrix` runs this for rdma-core 44, 56.1 and 65.0 on x86_64 and aarch64.
use mlx5dv_suite::layout::{
    c_table, c_version, compare, coverage_gaps, rust_layout, Kind, PROBE_INCLUDE, PROBE_VERSION, SKIPPED_FOR_VERSION,
};

fn union_names() -> Vec<&'static str> {
    let src = concat!(
        include_str!("../mlx5dv-raw/src/verbs.rs"),
        include_str!("../mlx5dv-raw/src/mlx5dv.rs"),
        include_str!("../mlx5dv-raw/src/rdma_cma.rs")
    );
    src.lines()
        .filter_map(|l| l.strip_prefix("pub union "))
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect()
}

#[test]
fn every_field_constant_and_enum_matches_the_c_headers() {
    let c = c_table();
    let errors = compare(&c, &rust_layout());
    let count = |k: Kind| c.iter().filter(|i| i.kind == k).count();
    eprintln!(
        "layout: rdma-core {} headers in {}: {} types, {} fields, {} constants, {} enums checked; {} newer items not in these headers",
        PROBE_VERSION,
        PROBE_INCLUDE,
        count(Kind::Type),
        count(Kind::Field),
        count(Kind::Const),
        count(Kind::Enum),
        SKIPPED_FOR_VERSION.len()
    );
    assert!(
        errors.is_empty(),
        "{} layout mismatches:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn c_fields_cover_every_struct_so_no_header_field_is_missing_in_rust() {
    let errors = coverage_gaps(&c_table(), &union_names());
    assert!(
        errors.is_empty(),
        "{} coverage problems:\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn probe_measures_every_rust_item_the_headers_have() {
    let c = c_table();
    assert_eq!(
        c.len(),
        rust_layout().len(),
        "the C probe and the Rust table must list the same items"
    );
    assert!(
        c.len() > 600,
        "only {} items measured: the generator lost declarations",
        c.len()
    );
}

#[test]
fn probe_was_built_for_the_requested_rdma_core_version() {
    assert_eq!(c_version() as u32, PROBE_VERSION);
    if let Ok(expected) = std::env::var("MLX5DV_LAYOUT_EXPECT_VERSION") {
        let expected: u32 = expected.split('.').next().unwrap().parse().unwrap();
        assert_eq!(PROBE_VERSION, expected, "probe built against {PROBE_INCLUDE}");
    }
}
