//! The engine's warnings, shown the Node way: `process.emitWarning(message, {type, code})`,
//! so a host can listen for them (`process.on('warning')`) or silence them (`--no-warnings`).

use napi::bindgen_prelude::{FnArgs, Function, JsObjectValue, Object};
use napi::Env;

/// The `type` every toolnexus warning carries.
const WARNING_TYPE: &str = "ToolnexusWarning";

/// Emits `warnings`, in order, on the JS thread.
pub fn emit(env: &Env, warnings: &[engine::Warning]) -> napi::Result<()> {
    if warnings.is_empty() {
        return Ok(());
    }
    let process: Object = env.get_global()?.get_named_property("process")?;
    let emit_warning: Function<FnArgs<(String, Object)>, ()> = process.get_named_property("emitWarning")?;
    for w in warnings {
        let mut options = Object::new(env)?;
        options.set_named_property("type", WARNING_TYPE)?;
        options.set_named_property("code", w.code)?;
        emit_warning.apply(process, FnArgs::from((w.message.clone(), options)))?;
    }
    Ok(())
}
