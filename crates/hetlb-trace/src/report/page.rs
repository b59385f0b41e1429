//! The page: a fixed HTML shell with its styles and script inline, and the model as JSON.

use super::model::Model;

const SHELL: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Text safe inside an HTML element: `&`, `<` and `>` escaped.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The page of `model`.
pub(super) fn render(model: &Model) -> String {
    // JSON inside a script element: `</` could end it, so every `<` is escaped.
    let data = serde_json::to_string(model)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c");
    SHELL
        .replace("{{TITLE}}", &escape(&model.title))
        .replace("{{STYLE}}", STYLE)
        .replace("{{DATA}}", &data)
        .replace("{{SCRIPT}}", SCRIPT)
}
