//! A streamed body (server-sent events) through the reader of a streamed call: however the
//! network splits it, it folds to the same reply, the same text deltas or the same error, and
//! the reply passes the checks of any reply.

use toolnexus::{fuzzing, Style};

/// The first byte picks where the body is cut in two; the rest is the body.
pub fn check(style: Style, data: &[u8]) {
    let Some((&cut, body)) = data.split_first() else { return };
    let whole = fuzzing::fold_stream(style, &[body]);
    let at = usize::from(cut) * body.len() / 255;
    let (a, b) = body.split_at(at);
    let split = fuzzing::fold_stream(style, &[a, b]);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    let trickled = fuzzing::fold_stream(style, &bytes);
    for other in [&split, &trickled] {
        match (&whole, other) {
            (Ok(w), Ok(o)) => assert_eq!(w, o, "a split changed the reply"),
            (Err(w), Err(o)) => assert_eq!((w.kind(), w.message()), (o.kind(), o.message())),
            _ => panic!("a split changed the outcome: {whole:?} / {other:?}"),
        }
    }
    let Ok((reply, deltas)) = whole else { return };
    assert!(deltas.iter().all(|d| !d.is_empty()), "an empty text delta");
    let body = serde_json::to_vec(&reply).expect("a reply serializes");
    crate::reply::check(style, &body);
}
