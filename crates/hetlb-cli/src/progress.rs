//! Progress bars on a terminal; silent when stderr is redirected.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

/// A bar of `len` steps labelled `message`, drawn on stderr only when it is a terminal.
pub fn bar(len: u64, message: impl Into<String>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:<28} [{bar:40}] {percent:>3}% {elapsed_precise} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(message.into());
    bar
}

/// A spinner with the elapsed time, for runs whose length is not known in advance; drawn on
/// stderr only when it is a terminal.
pub fn spinner(message: impl Into<String>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.set_message(message.into());
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// A bar for a library call that reports `(done, total)`: drawn, on a terminal, once the
/// total is known, and cleared when the last step is done.
pub fn counter(message: &'static str) -> impl FnMut(u64, u64) + Send {
    let mut shown: Option<ProgressBar> = None;
    move |done, total| {
        let b = shown.get_or_insert_with(|| bar(total, message));
        b.set_position(done);
        if done >= total {
            b.finish_and_clear();
        }
    }
}
