//! mimalloc for the libraries the bindings build (the `mimalloc` feature: the Node addon and
//! the Python extension). Their values are built on the host's
//! thread and dropped on the runtime's (and back), a pattern glibc's per-thread arenas handle
//! slowly: malloc, free and consolidation were a fifth of the Node addon's history-200 profile
//! and a sixth of the Python extension's instructions per `suspend` unit (DECISIONS.md, "The
//! bindings allocate with mimalloc"). Off by default: a Rust program that depends on the
//! engine chooses its own allocator, and so does a C host of libtoolnexus.
//!
//! The feature does not declare the global allocator: each binding library does, with
//! `#[global_allocator] static ALLOCATOR: toolnexus::Allocator = toolnexus::Allocator;`.
//! Cargo unifies features across one build's packages, so a `cargo build --workspace` turns
//! the feature on for libtoolnexus too; declared here, that would swap its allocator, and with
//! it which `free` its C hosts may use.

/// mimalloc, the global allocator the binding libraries declare.
pub use mimalloc::MiMalloc as Allocator;

/// mimalloc's `arena_eager_commit` (index 4 of mimalloc.h's `mi_option_e`, mimalloc 3), whose
/// default is 2: commit each arena up front on systems that overcommit, as Linux does.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Arena memory committed as it is used, not up front: up front, with transparent huge pages
/// on (madvise), the first touch of an arena made a Node process 4 MB bigger at load and
/// 7-13 MB bigger after a few thousand runs, for no measured speed (the same as
/// `MIMALLOC_ARENA_EAGER_COMMIT=0`). Set when the library is loaded, before its first
/// allocation. Only the default is changed: a host that set another value
/// (`MIMALLOC_ARENA_EAGER_COMMIT=1` commits up front) keeps it, and so would a mimalloc that
/// numbers its options otherwise.
#[ctor::ctor(unsafe)]
fn commit_arenas_lazily() {
    // SAFETY: plain calls into mimalloc's option table, before any thread of ours exists.
    unsafe {
        if libmimalloc_sys::mi_option_get(MI_OPTION_ARENA_EAGER_COMMIT) == 2 {
            libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        }
    }
}
