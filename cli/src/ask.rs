//! A suspension asked in the terminal: the [`toolnexus::WaitFor`] of an interactive run.
//! One question at a time (a turn's suspensions are waited for all at once), each answered
//! by approving, declining with a reason, or typing the input; the engine then re-runs the
//! tool with the answer or feeds the model the decline.

use std::sync::Arc;

use toolnexus::{Answer, HookFuture, Request, WaitFor};

use crate::session::{answer_to, form_fields, Decision};
use crate::term::{is_yes_no, Input, Ui};

/// Asks on the terminal.
pub struct TerminalAsk {
    ui: Arc<Ui>,
    input: Arc<Input>,
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl TerminalAsk {
    /// Asks through `ui`, reading the replies from `input`.
    pub fn new(ui: Arc<Ui>, input: Arc<Input>) -> TerminalAsk {
        TerminalAsk { ui, input, one_at_a_time: Arc::default() }
    }
}

impl WaitFor for TerminalAsk {
    fn wait_for(&self, request: Request) -> HookFuture<Option<Answer>> {
        let (ui, input, one) = (self.ui.clone(), self.input.clone(), self.one_at_a_time.clone());
        Box::pin(async move {
            let _turn = one.lock().await;
            ui.asking(true);
            let decision = ask(&ui, &input, &request).await;
            ui.asking(false);
            // The end of input answers nothing: the engine counts it as declined.
            let answer = decision.map(|d| answer_to(&request, &d));
            if let Some(a) = &answer {
                ui.answered(a);
            }
            Ok(answer)
        })
    }
}

/// Puts `request` to the person at the terminal until they give a usable reply.
async fn ask(ui: &Ui, input: &Input, request: &Request) -> Option<Decision> {
    input.discard_typed_ahead().await;
    ui.note(&format!("? [{}] {}", request.kind, request.prompt));
    if let Some(url) = request.url.as_deref().filter(|u| !u.is_empty()) {
        ui.note(&format!("  open {url}"));
    }
    let fields = form_fields(request);
    if !fields.is_empty() {
        let list: Vec<String> = fields.iter().map(|(name, kind)| format!("{name} ({kind})")).collect();
        let how = if fields.len() == 1 { "type its value" } else { "type a JSON object" };
        ui.note(&format!("  form: {}; {how}", list.join(", ")));
    }
    loop {
        if is_yes_no(request) {
            ui.prompt("  approve? [y]es / [n]o: ");
            let line = input.line().await?;
            ui.got_line();
            match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return Some(Decision::Approve),
                "n" | "no" => return Some(Decision::Decline(reason(ui, input).await?)),
                _ => ui.note("  please answer y or n"),
            }
        } else {
            ui.prompt("  your answer (an empty line declines): ");
            let line = input.line().await?;
            ui.got_line();
            if line.trim().is_empty() {
                return Some(Decision::Decline(reason(ui, input).await?));
            }
            return Some(Decision::Answer(line));
        }
    }
}

/// The reason for a decline ("declined" when none is given).
async fn reason(ui: &Ui, input: &Input) -> Option<String> {
    ui.prompt("  reason (optional): ");
    let line = input.line().await?;
    ui.got_line();
    Some(line.trim().to_string())
}
