"""Version comparisons on the site: start one from a bot's manage page, watch it fill in.

"Is v3 better than v2?" is answered by the comparison services
(``ladder.tournaments``): both versions play the same deals against the same
opponents in every seat rotation, and the answer is a paired difference with its
95% interval. This page starts one, shows every deal's rotations side by side
(links to each match and its replay) and says the answer in words; while matches
are still queued or running, the page's results refresh themselves
(``ladder/web/live.py``).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from ladder.accounts.requests import request_user
from ladder.bots import selectors as bot_selectors
from ladder.common.exceptions import NotFound
from ladder.tournaments import selectors as comparison_selectors
from ladder.tournaments import services as comparison_services
from ladder.tournaments.selectors import ComparisonReport
from ladder.web.comparison_form import comparison_form
from ladder.web.errors import shown_on
from ladder.web.forms import ComparisonForm
from ladder.web.owner import _manage_page, _own_bot


def answer_in_words(report: ComparisonReport) -> str:
    """The comparison's answer as a sentence a reader can act on, with its interval."""
    c = report.comparison
    old, new = f"v{c.old_version.number}", f"v{c.new_version.number}"
    if report.result is None:
        waiting = f"{report.open} match(es) still to play" if report.open else "no more to play"
        return (
            f"No answer yet: {report.complete_deals} complete deal(s) so far, and an answer needs "
            f"at least 2 ({waiting})."
        )
    r = report.result
    d, m = r.first_share_diff, r.mean_rank_diff
    share = (
        f"{new} finished first in {r.new_first_share:.0%} of its games and {old} in "
        f"{r.old_first_share:.0%}: a difference of {d.mean * 100:+.0f} points "
        f"(95% interval {d.low * 100:+.0f} to {d.high * 100:+.0f})"
    )
    ranks = (
        f"mean rank {r.new_mean_rank:.2f} against {r.old_mean_rank:.2f} "
        f"({m.mean:+.2f}, 95% interval {m.low:+.2f} to {m.high:+.2f}; lower is better)"
    )
    if d.low > 0 or m.high < 0:
        verdict = f"{new} is better than {old}"
    elif d.high < 0 or m.low > 0:
        verdict = f"{new} is worse than {old}"
    else:
        verdict = (
            f"No clear difference between {new} and {old} yet: the intervals include zero, "
            "so more deals would be needed to tell"
        )
    so_far = " so far" if report.open else ""
    return f"{verdict}{so_far}, over {r.deals} deals. {share}; {ranks}."


@login_required
@require_POST
def comparison_start(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = _own_bot(request, bot_id)
    form = comparison_form(bot, request.POST)
    if form.is_valid():
        d = form.cleaned_data
        try:
            opponents = [bot_selectors.bot_get_by_name(name=n) for n in d["opponents"]]
        except NotFound as exc:
            form.add_error("opponents", exc.message)
        else:
            with shown_on(form):
                comparison = comparison_services.comparison_create(
                    user=request_user(request),
                    bot_id=bot.pk,
                    old_version=d["old_version"],
                    new_version=d["new_version"],
                    opponent_ids=[o.pk for o in opponents],
                    deals=d["deals"],
                )
                messages.success(request, f"Comparison {comparison.pk} queued.")
                return redirect("web:comparison", comparison_id=comparison.pk)
    return _manage_page(request, bot, 400, comparison_form=form)


def comparison_context(request: HttpRequest, comparison_id: int) -> dict[str, Any]:
    """What the page and its live fragment show (the owner's or staff's only)."""
    with shown_on(ComparisonForm(versions=[])):
        report = comparison_selectors.comparison_get(
            comparison_id=comparison_id, user=request_user(request)
        )
    return {
        "report": report,
        "comparison": report.comparison,
        "answer": answer_in_words(report),
        "deals": comparison_selectors.comparison_deals(report.comparison),
        "opponents": list(report.comparison.opponents.all()),
    }


@login_required
def comparison_page(request: HttpRequest, comparison_id: int) -> HttpResponse:
    context = comparison_context(request, comparison_id)
    return render(request, "web/comparison.html", {"nav": "dashboard", **context})
