//! A part as each provider's block (SPEC §8A): only the shapes the provider accepts; a part it
//! has none for is an [`ErrorKind::UnsupportedPart`] error naming it, never a silent drop.

use serde_json::{json, Value};

use super::field;
use crate::client::Style;
use crate::error::{Error, ErrorKind, Result};

/// OpenAI `input_audio` formats by MIME type.
const AUDIO_FORMATS: [(&str, &str); 4] =
    [("audio/mpeg", "mp3"), ("audio/mp3", "mp3"), ("audio/wav", "wav"), ("audio/x-wav", "wav")];

fn style_name(style: Style) -> &'static str {
    match style {
        Style::OpenAi => "openai",
        Style::Anthropic => "anthropic",
    }
}

/// The error for a part `style` has no block for.
fn unsupported(part: &Value, style: Style) -> Error {
    let mime = field(part, "mimeType").filter(|m| !m.is_empty()).map(|m| format!(" ({m})")).unwrap_or_default();
    Error::new(
        ErrorKind::UnsupportedPart,
        format!("no \"{}\" block shape for a {} part{mime}", style_name(style), field(part, "type").unwrap_or("")),
    )
}

fn data_url(part: &Value) -> String {
    format!("data:{};base64,{}", field(part, "mimeType").unwrap_or(""), field(part, "data").unwrap_or(""))
}

/// `part` (canonical) as a `style` content block.
pub fn encode_part(part: &Value, style: Style) -> Result<Value> {
    let text = || json!({"type": "text", "text": field(part, "text").unwrap_or("")});
    let url = field(part, "url").filter(|u| !u.is_empty());
    let data = field(part, "data").filter(|d| !d.is_empty());
    let block = match (style, field(part, "type").unwrap_or("")) {
        (_, "text") => text(),
        (Style::OpenAi, "image") => {
            json!({"type": "image_url", "image_url": {"url": url.map_or_else(|| data_url(part), str::to_string)}})
        }
        (Style::OpenAi, "file") if data.is_some() => json!({"type": "file", "file": {
            "filename": field(part, "name").filter(|n| !n.is_empty()).unwrap_or("file"), "file_data": data_url(part)}}),
        (Style::OpenAi, "audio") => {
            let mime = field(part, "mimeType").unwrap_or("");
            match (data, AUDIO_FORMATS.iter().find(|(m, _)| *m == mime)) {
                (Some(d), Some((_, format))) => {
                    json!({"type": "input_audio", "input_audio": {"data": d, "format": format}})
                }
                _ => return Err(unsupported(part, style)),
            }
        }
        (Style::Anthropic, kind @ ("image" | "file")) => {
            let source = match url {
                Some(u) => json!({"type": "url", "url": u}),
                None => {
                    json!({"type": "base64", "media_type": field(part, "mimeType").unwrap_or(""), "data": data.unwrap_or("")})
                }
            };
            json!({"type": if kind == "image" { "image" } else { "document" }, "source": source})
        }
        _ => return Err(unsupported(part, style)),
    };
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_style_has_its_allowlisted_shapes() {
        let png = json!({"type": "image", "mimeType": "image/png", "data": "Zm9v"});
        assert_eq!(
            encode_part(&png, Style::OpenAi).unwrap(),
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,Zm9v"}})
        );
        assert_eq!(
            encode_part(&png, Style::Anthropic).unwrap(),
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "Zm9v"}})
        );
        let pdf = json!({"type": "file", "mimeType": "application/pdf", "data": "Zm9v"});
        assert_eq!(
            encode_part(&pdf, Style::OpenAi).unwrap(),
            json!({"type": "file", "file": {"filename": "file", "file_data": "data:application/pdf;base64,Zm9v"}})
        );
        assert_eq!(encode_part(&pdf, Style::Anthropic).unwrap()["type"], "document");
        let link = json!({"type": "file", "mimeType": "application/pdf", "url": "https://x/y.pdf"});
        assert_eq!(
            encode_part(&link, Style::OpenAi).unwrap_err().message(),
            "no \"openai\" block shape for a file part (application/pdf)"
        );
        let mp3 = json!({"type": "audio", "mimeType": "audio/mpeg", "data": "Zm9v"});
        assert_eq!(encode_part(&mp3, Style::OpenAi).unwrap()["input_audio"]["format"], "mp3");
        let e = encode_part(&mp3, Style::Anthropic).unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (ErrorKind::UnsupportedPart, "no \"anthropic\" block shape for a audio part (audio/mpeg)")
        );
        let ogg = json!({"type": "audio", "mimeType": "audio/ogg", "data": "Zm9v"});
        assert!(encode_part(&ogg, Style::OpenAi).is_err());
    }
}
