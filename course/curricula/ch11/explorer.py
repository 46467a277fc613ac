"""Chapter 11's budget explorer: sliders call your ``build_context`` and show what it returned."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets

from course.display.notebook import pending_note
from course.display.views import View, esc
from course.locale import N_
from course.locale import gettext as _

from . import show

SLIDERS = ("max_tokens", "reserved_output", "safety_margin")
"""The budget's numeric fields the explorer turns into sliders."""
LABELS = {
    "max_tokens": N_("max_tokens"),
    "reserved_output": N_("reserved_output"),
    "safety_margin": N_("safety_margin"),
    "system_prompt": N_("system_prompt"),
    "kept": N_("kept"),
    "reason": N_("reason"),
}
"""Each control's and label's caption: the option's name (a translation may say it in words)."""


class BudgetExplorer:
    """Sliders for the budget over one path; each change calls ``build_context`` again and shows
    what it returned (``result``; ``None`` after an error, which ``error`` then holds)."""

    def __init__(
        self,
        path: Sequence[Any],
        build_context: Callable[..., Any],
        *,
        estimate_tokens: Callable[[dict[str, Any]], float],
        budget: Any,
        groups: Sequence[Any] = (),
        title: str = "",
        continuous_update: bool = True,
    ) -> None:
        self.path = path
        self.build_context = build_context
        self.estimate_tokens = estimate_tokens
        self.budget = budget
        self.groups = groups
        self.result: Any = None
        self.error: BaseException | None = None
        top = _slider_top(budget, groups, estimate_tokens)
        small = max(20, top // 4)
        self.max_tokens, self.reserved_output, self.safety_margin = (
            widgets.IntSlider(
                value=int(getattr(budget, name)),
                min=0,
                max=max(most, int(getattr(budget, name))),
                **_control(name, continuous_update),
            )
            for name, most in zip(SLIDERS, (top, small, small), strict=True)
        )
        self.system_prompt = widgets.Text(
            value=budget.system_prompt, **_control("system_prompt", continuous_update)
        )
        self.table = widgets.HTML(layout=widgets.Layout(margin="0 2em 0 0"))
        self.bars, self.note = widgets.HTML(), widgets.HTML()
        self.kept, self.reason = widgets.Label(), widgets.Label()
        for control in (*self.sliders, self.system_prompt):
            control.observe(self.refresh, names="value")
        left = widgets.VBox([self.max_tokens, self.system_prompt])
        right = widgets.VBox([self.reserved_output, self.safety_margin])
        self.widget = widgets.VBox(
            [
                widgets.HTML(f"<b>{esc(title)}</b>" if title else ""),
                widgets.HBox([left, right]),
                widgets.HBox([self.table, self.bars]),
                _captioned("kept", self.kept),
                _captioned("reason", self.reason),
                self.note,
            ]
        )
        self.refresh()

    @property
    def sliders(self) -> tuple[widgets.IntSlider, ...]:
        return (self.max_tokens, self.reserved_output, self.safety_margin)

    def current_budget(self) -> Any:
        """The budget the controls describe now (the given budget's type, new values)."""
        values = {name: getattr(self, name).value for name in SLIDERS}
        return dataclasses.replace(self.budget, system_prompt=self.system_prompt.value, **values)

    def refresh(self, change: object = None) -> None:
        """Call ``build_context`` with the current budget and show what came back (on a change)."""
        options = self.current_budget().options()
        try:
            self.result = self.build_context(
                self.path, **options, estimate_tokens=self.estimate_tokens
            )
            self.error = None
        except Exception as problem:  # a learner's bug or a pending lab: shown, not raised
            self.result, self.error = None, problem
        if self.result is not None:
            self.table.value = show.deductions(self.result.tokens).html
            self.bars.value = show.bars(self.groups, self.result.kept_entry_ids).html
            self.kept.value = show.id_list(self.result.kept_entry_ids)
            self.reason.value = str(self.result.reason)
            self.note.value = ""
        else:
            self.table.value = self.bars.value = ""
            self.kept.value = self.reason.value = "—"
            self.note.value = self._failure().html

    def _failure(self) -> View:
        assert self.error is not None
        return pending_note(self.error) or show.refused(self.error)

    def summary(self) -> str:
        """What the explorer shows now, as plain text."""
        if self.result is None:
            return self._failure().text
        return show.projection(self.result, self.groups or None).text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/plain"] = self.summary()
        return bundle


def _slider_top(budget: Any, groups: Sequence[Any], estimate: Callable[..., float]) -> int:
    """A ``max_tokens`` range that reaches past keeping every group."""
    total = sum(estimate(entry.message) for group in groups for entry in group.entries)
    fixed = budget.reserved_output + budget.safety_margin + 20
    top = max(int(budget.max_tokens) * 2, total + fixed)
    step = 10 ** max(1, int(math.log10(max(top, 1))) - 1)
    return int(math.ceil(top / step) * step)


def _control(name: str, continuous: bool) -> dict[str, Any]:
    """A control's caption, width and updating, the same for every control of the explorer."""
    return {
        "description": _(LABELS[name]),
        "continuous_update": continuous,
        "style": {"description_width": "9em"},
        "layout": widgets.Layout(width="26em"),
    }


def _captioned(name: str, label: widgets.Label) -> widgets.HBox:
    """A label with a bold caption in front; the label's value stays just the data."""
    title = widgets.HTML(f"<b>{esc(_(LABELS[name]))}</b>", layout=widgets.Layout(width="4.5em"))
    return widgets.HBox([title, label])
