"""The plain-text table ``bench/run.py`` prints."""

from __future__ import annotations

from typing import Any


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _met(value: Any) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def table(report: dict[str, Any]) -> str:
    m = report["machine"]
    lines = [
        f"machine: {m['nproc']} x {m['cpu']}, {m['memory_gib']} GiB, Python {m['python']}, "
        f"helm {m['helm'].split()[0]}, helmfile {m['helmfile'].split()[0]}; "
        f"median of {report['runs']} runs{' (QUICK: not for the docs)' if report['quick'] else ''}",
        "",
        f"{'benchmark':<58} {'measured':>22} {'target':>12} {'met':>4}",
        "-" * 99,
    ]

    def row(name: str, measured: str, target: str, met: Any) -> None:
        lines.append(f"{name:<58} {measured:>22} {target:>12} {_met(met):>4}")

    cases = report["cases"]
    if "render_cli" in cases:
        c = cases["render_cli"]
        row(
            f"1. CLI render {_ms(c['cli']['median'])} vs helm {_ms(c['helm']['median'])}",
            f"{c['ratio']:.2f}x",
            f"<= {c['target']:.1f}x",
            c["met"],
        )
    if "library" in cases:
        c = cases["library"]
        p = c["parts"]
        row(
            f"2. render() {_ms(p['render()']['median'])} vs Helm.template "
            f"{_ms(p['Helm.template()']['median'])}",
            f"+{c['overhead'] * 100:.0f}%",
            f"<= {c['target'] * 100:.0f}%",
            c["met"],
        )
    if "fleet" in cases:
        c = cases["fleet"]
        p = c["parts"]
        fleet = p["scs-templates render-fleet"]["median"]
        row(
            f"3. fleet of {c['clusters']}: render-fleet {fleet:.2f} s vs helmfile "
            f"{p['helmfile template --skip-deps']['median']:.2f} s",
            f"{c['speedup_vs_helmfile']:.1f}x faster",
            f">= {c['target_vs_helmfile']:.1f}x",
            c["speedup_vs_helmfile"] >= c["target_vs_helmfile"],
        )
        row(
            f"   vs sequential helm loop {p['helm template loop']['median']:.2f} s",
            f"{c['speedup_vs_loop']:.1f}x faster",
            f">= {c['target_vs_loop']:.1f}x",
            c["speedup_vs_loop"] >= c["target_vs_loop"],
        )
        mem = c["memory"]
        row(
            "   render-fleet peak RSS: Python / largest helm",
            f"{mem['python_mib']:.0f} / {mem['helm_mib']:.0f} MiB",
            "-",
            None,
        )
    if "startup" in cases:
        c = cases["startup"]
        p = c["parts"]
        help_s = p["scs-templates --help"]["median"]
        validate_s = p["scs-templates validate"]["median"]
        row(
            "4. scs-templates --help",
            _ms(help_s),
            f"<= {_ms(c['help_target'])}",
            help_s <= c["help_target"],
        )
        row(
            "   scs-templates validate",
            _ms(validate_s),
            f"<= {_ms(c['validate_target'])}",
            validate_s <= c["validate_target"],
        )
        row("   python -c pass (floor)", _ms(p["python -c pass (floor)"]["median"]), "-", None)
    if "memory" in cases:
        c = cases["memory"]
        row(
            "5. render peak RSS, Python process",
            f"{c['python_mib']:.0f} MiB",
            f"<= {c['target_python_mib']:.0f} MiB",
            c["met"],
        )
        row("   helm child / sum", f"{c['helm_mib']:.0f} / {c['sum_mib']:.0f} MiB", "-", None)
    if "rollout" in cases:
        c = cases["rollout"]
        row(
            f"6. rollout: {len(c['changes'])} changes, spurious / missing renames",
            f"{c['spurious_total']} / {c['missing_total']}",
            "0 / 0",
            c["met"],
        )
    return "\n".join(lines)
