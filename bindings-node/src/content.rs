//! Content parts with the JS port's names (`text`, `attach`, `fromPath`, `fromBytes`,
//! `fromBlob`, `fromDataUrl`, `fromUrl`, `encodePart`, `MEDIA_TYPES`, ...). Every rule (the
//! MIME table, the part type a MIME type gives, the size limit, validation, each provider's
//! block shapes, the error texts) is the engine's `content` module; here values are converted.
//! `index.js` turns JS's byte spellings (`ArrayBuffer`, any view) into a `Uint8Array` and reads
//! a `Blob`, the only things JS must do itself.

use engine::content::{self, PartOptions, PartSource};
use engine::ErrorKind;
use napi::bindgen_prelude::{Either, Object, PromiseRaw, Uint8ArraySlice, Unknown};
use napi::Env;
use napi_derive::napi;
use serde_json::{json, Map, Value};

use crate::args::{arg, optional_object_arg};
use crate::convert::Json;
use crate::error::{throw, to_js};
use crate::keepalive;
use crate::options::{json_value, plain_json};

/// An `AttachOptions` argument (`{mimeType?, name?, maxPartBytes?}`), read by the engine.
fn part_options(env: &Env, opts: Unknown<'_>, func: &str) -> napi::Result<PartOptions> {
    let v = match optional_object_arg::<Object>(env, opts, func, "opts")? {
        None => Value::Null,
        Some(o) => Value::Object(plain_json(env, &o, func, "opts", &[], &[])?),
    };
    PartOptions::from_json(&v).map_err(|e| throw(env, e))
}

/// A part argument, as JSON.
fn part_arg(env: &Env, part: Unknown<'_>, func: &str) -> napi::Result<Value> {
    Ok(arg::<Json>(env, part, func, "part", "a content part")?.0)
}

/// A byte count argument (`undefined`: none): a JS number that is a whole number of at least 0.
fn count_arg(env: &Env, value: Unknown<'_>, func: &str, name: &str) -> napi::Result<Option<u64>> {
    match arg::<Option<f64>>(env, value, func, name, "a number")? {
        None => Ok(None),
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => Ok(Some(n as u64)),
        Some(_) => {
            Err(throw(env, crate::error::invalid(format!("{func}: {name} must be a whole number of at least 0"))))
        }
    }
}

fn build(env: &Env, source: PartSource, opts: &PartOptions) -> napi::Result<Value> {
    content::build_part_by_mime(source, opts).map_err(|e| throw(env, e))
}

/// `build` off the JS thread (it reads a file), settled as a Promise.
fn build_later<'e>(env: &'e Env, source: PartSource, opts: PartOptions) -> napi::Result<PromiseRaw<'e, Value>> {
    let work = async move {
        tokio::task::spawn_blocking(move || content::build_part_by_mime(source, &opts))
            .await
            .unwrap_or_else(|e| Err(engine::Error::new(ErrorKind::Internal, format!("reading a part failed: {e}"))))
    };
    keepalive::spawn(env, keepalive::next_id(), work, |env, built| built.map_err(|e| to_js(env, e, None)))
}

/// A text part.
#[napi(ts_args_type = "value: string", ts_return_type = "ContentPart")]
pub fn text(env: &Env, value: Unknown) -> napi::Result<Value> {
    let value: String = arg(env, value, "text", "value", "a string")?;
    Ok(content::text_part(&value))
}

/// `attach` of a string: a `data:` URL, an `http(s)://` URL or a path (read off the JS thread).
#[napi(js_name = "_attachText", skip_typescript)]
pub fn attach_text<'e>(env: &'e Env, source: String, opts: Unknown<'e>) -> napi::Result<PromiseRaw<'e, Value>> {
    let opts = part_options(env, opts, "attach")?;
    build_later(env, PartSource::Text(source), opts)
}

/// `attach` of bytes (a `Uint8Array` by now; anything else is refused here).
#[napi(js_name = "_attachBytes", skip_typescript)]
pub fn attach_bytes(env: &Env, bytes: Unknown, opts: Unknown) -> napi::Result<Value> {
    let bytes: Uint8ArraySlice = arg(env, bytes, "attach", "source", "a path, a URL, bytes or a Blob")?;
    let source = PartSource::Bytes(bytes.to_vec());
    build(env, source, &part_options(env, opts, "attach")?)
}

/// `fromBytes` (a `Uint8Array` by now): `mimeType` is the part's.
#[napi(js_name = "_fromBytes", skip_typescript)]
pub fn from_bytes(env: &Env, bytes: Unknown, mime_type: Unknown, opts: Unknown) -> napi::Result<Value> {
    const F: &str = "fromBytes";
    let bytes: Uint8ArraySlice = arg(env, bytes, F, "bytes", "a Uint8Array, an ArrayBuffer or an ArrayBufferView")?;
    let mime: Option<String> = arg(env, mime_type, F, "mimeType", "a string")?;
    let mut opts = part_options(env, opts, F)?;
    if mime.is_some() {
        opts.mime_type = mime;
    }
    build(env, PartSource::Bytes(bytes.to_vec()), &opts)
}

/// `fromBlob`, with the Blob read: its bytes, its `type` and its `name` (a `File`'s).
#[napi(js_name = "_fromBlob", skip_typescript)]
pub fn from_blob(env: &Env, bytes: Unknown, kind: Unknown, name: Unknown, opts: Unknown) -> napi::Result<Value> {
    const F: &str = "fromBlob";
    let bytes: Uint8ArraySlice = arg(env, bytes, F, "blob", "a Blob or a File")?;
    let mime: Option<String> = arg(env, kind, F, "blob.type", "a string")?;
    let name: Option<String> = arg(env, name, F, "blob.name", "a string")?;
    let opts = part_options(env, opts, F)?;
    build(env, PartSource::Typed { bytes: bytes.to_vec(), mime, name }, &opts)
}

/// Reads the file at `path` now (off the JS thread), so the part holds its bytes, never the
/// path. The MIME type comes from `opts.mimeType` or the extension table, the part type from
/// the MIME type.
#[napi(
    js_name = "fromPath",
    ts_args_type = "path: string, opts?: AttachOptions",
    ts_return_type = "Promise<ContentPart>"
)]
pub fn from_path<'e>(env: &'e Env, path: Unknown<'e>, opts: Unknown<'e>) -> napi::Result<PromiseRaw<'e, Value>> {
    let path: String = arg(env, path, "fromPath", "path", "a string")?;
    let opts = part_options(env, opts, "fromPath")?;
    build_later(env, PartSource::Path(path), opts)
}

/// A part from a base64 `data:<mime>;base64,<data>` URL: its MIME type and data, never a url.
#[napi(js_name = "fromDataUrl", ts_args_type = "url: string, opts?: AttachOptions", ts_return_type = "ContentPart")]
pub fn from_data_url(env: &Env, url: Unknown, opts: Unknown) -> napi::Result<Value> {
    let url: String = arg(env, url, "fromDataUrl", "url", "a string")?;
    build(env, PartSource::DataUrl(url), &part_options(env, opts, "fromDataUrl")?)
}

/// A part that keeps an `http(s)://` URL as its `url`; the MIME type comes from
/// `opts.mimeType` or the extension table.
#[napi(js_name = "fromUrl", ts_args_type = "url: string, opts?: AttachOptions", ts_return_type = "ContentPart")]
pub fn from_url(env: &Env, url: Unknown, opts: Unknown) -> napi::Result<Value> {
    let url: String = arg(env, url, "fromUrl", "url", "a string")?;
    build(env, PartSource::Url(url), &part_options(env, opts, "fromUrl")?)
}

/// A media type of the extension table.
#[napi(object, object_from_js = false)]
pub struct MediaType {
    pub mime_type: String,
    #[napi(js_name = "type", ts_type = "'image' | 'file' | 'audio'")]
    pub kind: String,
}

fn media_type(entry: (&str, &str)) -> MediaType {
    MediaType { mime_type: entry.0.to_string(), kind: entry.1.to_string() }
}

/// The extension table, for `MEDIA_TYPES`.
#[napi(js_name = "_mediaTypes", skip_typescript)]
pub fn media_types() -> Value {
    let table: Map<String, Value> = content::MEDIA_TYPES
        .iter()
        .map(|(ext, mime, kind)| ((*ext).to_string(), json!({"mimeType": mime, "type": kind})))
        .collect();
    Value::Object(table)
}

/// The lower-cased extension of a path or name, without its dot (`""` when it has none).
#[napi(js_name = "extensionOf", ts_args_type = "path: string")]
pub fn extension_of(env: &Env, path: Unknown) -> napi::Result<String> {
    let path: String = arg(env, path, "extensionOf", "path", "a string")?;
    Ok(content::extension(&path).unwrap_or_default())
}

/// The extension table's entry for a path or name, or `undefined`.
#[napi(js_name = "mediaTypeFor", ts_args_type = "path: string", ts_return_type = "MediaType | undefined")]
pub fn media_type_for(env: &Env, path: Unknown) -> napi::Result<Either<MediaType, ()>> {
    let path: String = arg(env, path, "mediaTypeFor", "path", "a string")?;
    Ok(content::media_type(&path).map_or(Either::B(()), |t| Either::A(media_type(t))))
}

/// The part type of a MIME type: `image/*` is `image`, `audio/*` is `audio`, else `file`.
#[napi(js_name = "partTypeForMime", ts_args_type = "mimeType: string", ts_return_type = "'image' | 'file' | 'audio'")]
pub fn part_type_for_mime(env: &Env, mime_type: Unknown) -> napi::Result<&'static str> {
    let mime: String = arg(env, mime_type, "partTypeForMime", "mimeType", "a string")?;
    Ok(content::kind_for_mime(&mime))
}

/// The decoded length of standard base64, without decoding it.
#[napi(js_name = "base64Bytes", ts_args_type = "b64: string")]
pub fn base64_bytes(env: &Env, b64: Unknown) -> napi::Result<f64> {
    let b64: String = arg(env, b64, "base64Bytes", "b64", "a string")?;
    Ok(content::decoded_len(&b64) as f64)
}

/// The decoded bytes a part carries (0 for a text or url part).
#[napi(js_name = "partBytes", ts_args_type = "part: ContentPart")]
pub fn part_bytes(env: &Env, part: Unknown) -> napi::Result<f64> {
    Ok(content::part_bytes(&part_arg(env, part, "partBytes")?) as f64)
}

/// The decoded bytes a media part counts as one token for.
#[napi]
pub const PART_BYTES_PER_TOKEN: u32 = content::PART_BYTES_PER_TOKEN as u32;

/// The fewest tokens a media part counts as.
#[napi]
pub const MIN_PART_TOKENS: u32 = content::MIN_PART_TOKENS as u32;

/// The tokens a media part of `bytes` decoded bytes counts as: `max(85, floor(bytes / 750))`.
#[napi(js_name = "partTokens", ts_args_type = "bytes: number")]
pub fn part_tokens(env: &Env, bytes: Unknown) -> napi::Result<f64> {
    let Some(bytes) = count_arg(env, bytes, "partTokens", "bytes")? else {
        return Err(throw(env, crate::error::invalid("partTokens: bytes is required")));
    };
    Ok(content::media_tokens(bytes) as f64)
}

/// `{type, mimeType, bytes}` (a text part: `{type, bytes}`, its UTF-8 length): what may be
/// logged of a part, never its data.
#[napi(
    js_name = "describePart",
    ts_args_type = "part: ContentPart",
    ts_return_type = "{ type: string; mimeType?: string | null; bytes: number }"
)]
pub fn describe_part(env: &Env, part: Unknown) -> napi::Result<Value> {
    Ok(content::part_view(&part_arg(env, part, "describePart")?))
}

/// A text part's text; any other `<type> (<mimeType>, <bytes> bytes)`, the same in every port.
#[napi(js_name = "summarizePart", ts_args_type = "part: ContentPart")]
pub fn summarize_part(env: &Env, part: Unknown) -> napi::Result<String> {
    Ok(content::part_line(&part_arg(env, part, "summarizePart")?))
}

/// `[unsupported <type> part (<mimeType>, <bytes> bytes)]`: what a model is sent for a part it
/// cannot take.
#[napi(js_name = "unsupportedPlaceholder", ts_args_type = "part: ContentPart")]
pub fn unsupported_placeholder(env: &Env, part: Unknown) -> napi::Result<String> {
    Ok(content::placeholder_text(&part_arg(env, part, "unsupportedPlaceholder")?))
}

/// Whether `value` is a part (a provider's own block, `image_url` say, is not).
#[napi(js_name = "isContentPart", ts_args_type = "value: unknown", ts_return_type = "value is ContentPart")]
pub fn is_content_part(env: &Env, value: Unknown) -> napi::Result<bool> {
    Ok(json_value(env, value, "isContentPart", "value").is_ok_and(|v| content::is_part(&v)))
}

/// `part` itself once checked (a non-text part carries a `mimeType` and exactly one of `data`
/// or `url`), and no more than `maxPartBytes` decoded bytes when that is given; else a
/// `ContentPartError` saying why.
#[napi(
    js_name = "validatePart",
    ts_args_type = "part: ContentPart, maxPartBytes?: number",
    ts_return_type = "ContentPart"
)]
pub fn validate_part<'e>(env: &'e Env, part: Unknown<'e>, max_part_bytes: Unknown<'e>) -> napi::Result<Unknown<'e>> {
    let limit = count_arg(env, max_part_bytes, "validatePart", "maxPartBytes")?;
    content::validate_within(&part_arg(env, part, "validatePart")?, limit).map_err(|e| throw(env, e))?;
    Ok(part)
}

/// `part` as the `style` provider's content block, or `undefined` when that provider has no
/// block for it (Anthropic and audio; OpenAI and a file by URL).
#[napi(
    js_name = "encodePart",
    ts_args_type = "part: ContentPart, style: PartStyle",
    ts_return_type = "Record<string, any> | undefined"
)]
pub fn encode_part(env: &Env, part: Unknown, style: Unknown) -> napi::Result<Either<Value, ()>> {
    let part = part_arg(env, part, "encodePart")?;
    let style: String = arg(env, style, "encodePart", "style", "a string")?;
    let style = engine::Style::parse(&style).map_err(|e| throw(env, e))?;
    match content::encode_part(&part, style) {
        Ok(block) => Ok(Either::A(block)),
        Err(e) if e.kind() == ErrorKind::UnsupportedPart => Ok(Either::B(())),
        Err(e) => Err(throw(env, e)),
    }
}
