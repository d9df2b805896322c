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
        f"helm {m['helm'].split()[0]}, helmfile {m['helmfile'].split()[0]}; load average "
        f"{' / '.join(f'{x:.1f}' for x in m['loadavg_at_start'])} at the start; "
        f"median of {report['runs']} runs{' (QUICK: not for the docs)' if report['quick'] else ''}",
        "",
        f"{'benchmark':<62} {'measured':>22} {'target':>12} {'met':>4}",
        "-" * 103,
    ]

    def row(name: str, measured: str, target: str, met: Any) -> None:
        lines.append(f"{name:<62} {measured:>22} {target:>12} {_met(met):>4}")

    cases = report["cases"]
    for name, case in cases.items():
        if "load" in case:
            before, after = case["load"]["before"][0], case["load"]["after"][0]
            row(f"   ({name}: load average {before:.1f} -> {after:.1f})", "", "", None)
    if "render_cli" in cases:
        c = cases["render_cli"]
        for name, r in c["examples"].items():
            row(
                f"1. render {name} {_ms(r['cli']['median'])} vs helm {_ms(r['helm']['median'])}",
                f"{r['ratio']:.2f}x",
                f"<= {c['target']:.1f}x",
                r["met"],
            )
            if "cpu_ratio" in r:
                row(
                    f"   CPU time {_ms(r['cli_cpu']['median'])} vs {_ms(r['helm_cpu']['median'])}",
                    f"{r['cpu_ratio']:.2f}x",
                    f"<= {c['target']:.1f}x",
                    r.get("cpu_met"),
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
    for key in sorted((k for k in cases if k.startswith("fleet_") and k[6:].isdigit()), key=len):
        c = cases[key]
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
            f"   vs {c['loop']} {p[c['loop']]['median']:.2f} s",
            f"{c['speedup_vs_loop']:.1f}x faster",
            f">= {c['target_vs_loop']:.1f}x",
            c["speedup_vs_loop"] >= c["target_vs_loop"],
        )
        if "cpu" in p["scs-templates render-fleet"]:
            own = p["scs-templates render-fleet"]["cpu"]["median"]
            row(
                f"   CPU time: render-fleet {own:.1f} s, helmfile "
                f"{p['helmfile template --skip-deps']['cpu']['median']:.1f} s, loop "
                f"{p[c['loop']]['cpu']['median']:.1f} s",
                "",
                "-",
                None,
            )
        mem = c["memory"]
        row(
            "   render-fleet peak RSS: Python / largest helm",
            f"{mem['python_mib']:.0f} / {mem['helm_mib']:.0f} MiB",
            "-",
            None,
        )
    if "fleet_scaling" in cases:
        c = cases["fleet_scaling"]
        for size, r in c["sizes"].items():
            row(
                f"4. render-fleet of {size}: {r['wall']['median']:.2f} s",
                f"{r['per_cluster_ms']:.1f} ms/cluster",
                "-",
                None,
            )
            if "cpu_per_cluster_ms" in r:
                row("     (CPU time)", f"{r['cpu_per_cluster_ms']:.1f} ms/cluster", "-", None)
        mem = c["memory_largest"]
        row(
            f"   peak RSS at {mem['clusters']}: Python / largest helm",
            f"{mem['python_mib']:.0f} / {mem['helm_mib']:.0f} MiB",
            f"<= {c['target_mib']:.0f} MiB",
            c["met"],
        )
    if "helm_batch" in cases:
        c = cases["helm_batch"]
        per = c["cpu_per_cluster_ms"]
        row(
            f"4b. helm CPU per cluster, batch of {c['clusters_per_batch']}: libraries per alias",
            f"{per['libraries per alias']:.1f} ms",
            "-",
            None,
        )
        row(
            "    shared libraries, helm checks the schema",
            f"{per['shared libraries, helm checks the schema']:.1f} ms"
            f" ({c['sharing_saves'] * 100:.0f}% less)",
            "-",
            None,
        )
        row(
            "    shared libraries, values gate (render-fleet)",
            f"{per['shared libraries, values gate']:.1f} ms ({c['schema_share'] * 100:.0f}% less)"
            f" + gate {c['gate_ms_per_cluster']['cpu']:.2f} ms",
            "-",
            None,
        )
        row(
            "    one plain helm template (per cluster)",
            f"{per['one plain helm template']:.1f} ms",
            "-",
            None,
        )
    if "startup" in cases:
        c = cases["startup"]
        p = c["parts"]
        for label, key, target in (
            ("5. scs-templates --help", "scs-templates --help", "help_target"),
            ("   scs-templates --version", "scs-templates --version", "version_target"),
            ("   scs-templates validate", "scs-templates validate", "validate_target"),
        ):
            value = p[key]["median"]
            row(label, _ms(value), f"<= {_ms(c[target])}", value <= c[target])
            if "cpu" in p[key]:
                floor = p["python -c pass (floor)"].get("cpu", {}).get("median")
                per_floor = "" if not floor else f" = {p[key]['cpu']['median'] / floor:.1f}x floor"
                row(
                    f"     (CPU time, user + system{per_floor})",
                    _ms(p[key]["cpu"]["median"]),
                    "-",
                    None,
                )
        row("   python -c pass (floor)", _ms(p["python -c pass (floor)"]["median"]), "-", None)
    if "breakdown" in cases:
        c = cases["breakdown"]
        row("6. breakdown of one render: interpreter start", _ms(c["interpreter_start"]), "-", None)
        for name, seconds in c["steps"].items():
            cpu = c.get("steps_cpu", {}).get(name)
            measured = _ms(seconds) + ("" if cpu is None else f", CPU {_ms(cpu)}")
            row(f"   {name[:58]}", measured, "-", None)
        row("   interpreter teardown (saved by the fast exit)", _ms(c["teardown"]), "-", None)
        row("   bytecode compilation (no __pycache__)", _ms(c["bytecode_compilation"]), "-", None)
    if "memory" in cases:
        c = cases["memory"]
        row(
            "7. render peak RSS, Python process",
            f"{c['python_mib']:.0f} MiB",
            f"<= {c['target_python_mib']:.0f} MiB",
            c["met"],
        )
        row("   helm child / sum", f"{c['helm_mib']:.0f} / {c['sum_mib']:.0f} MiB", "-", None)
    if "rollout" in cases:
        c = cases["rollout"]
        row(
            f"8. rollout: {len(c['changes'])} changes, spurious / missing renames",
            f"{c['spurious_total']} / {c['missing_total']}",
            "0 / 0",
            c["met"],
        )
    return "\n".join(lines)
