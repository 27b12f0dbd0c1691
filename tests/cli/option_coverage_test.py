#!/usr/bin/env python3
"""Option coverage: src/cli/coverage/COMMAND.tsv against each command's parser.

For each of the eleven Slurm-named commands Drover has, every option Slurm 22.05's man pages list
(src/cli/coverage/slurm-options-22.05.md) must have exactly one row in the command's TSV, with a
status; every option the parser accepts (`drover options COMMAND`) must have a row; an option
marked implemented, equivalent or warned must be in the parser with Slurm's short letter and
argument kind; one marked refused must not be (getopt then refuses it) unless its note quotes
the refusal. The totals must reach MINIMUM_PERCENT and match the table in docs/cli.md.

Usage: option_coverage_test.py DROVER SOURCE_DIR [--update-docs]
"""
import re
import subprocess
import sys
from pathlib import Path

COMMANDS = ["sbatch", "srun", "salloc", "squeue", "sinfo", "scancel", "sacct", "scontrol",
            "sprio", "sshare", "sacctmgr", "sreport", "sdiag", "sstat", "sbcast", "sattach"]
STATUSES = {"implemented", "equivalent", "warned", "refused", "extra"}
# Implemented or deliberately equivalent, of every option of the ten commands: the floor only
# rises (issue: at least 95).
MINIMUM_PERCENT = 96
# The man pages list these without their argument, though Slurm's parsers require one.
REFERENCE_ARGUMENT_FIXES = {
    ("sacct", "format"): "required",
    ("sacct", "qos"): "required",
    ("sacct", "partition"): "required",
    ("sacct", "starttime"): "required",
    ("sacct", "timelimit-min"): "required",  # sacct's getopt string has "k:K:"
    ("sacct", "timelimit-max"): "required",
    ("sprio", "jobs"): "optional",  # "-j, --jobs[=<job_id_list>]" in sprio(1)
    ("squeue", "steps"): "optional",  # "-s, --steps[=<step_list>]" in squeue(1)
    ("sreport", "cluster"): "required",
    ("sstat", "format"): "required",  # "-o, --format" in sstat(1); its getopt has "o:"
    ("sstat", "jobs"): "required",  # "-M, --cluster" in sreport(1); its getopt has "M:"
}
BEGIN, END = "<!-- option-coverage:begin -->", "<!-- option-coverage:end -->"


def reference(path):
    options = {}
    for section in re.split(r"^## ", path.read_text(), flags=re.M)[1:]:
        command = section.split()[0]
        entries = {}
        for text in re.findall(r"`([^`]*)`", section):
            m = re.fullmatch(r"(?:-(.), )?--([A-Za-z0-9_-]+)(=ARG|\[=ARG\])?", text)
            if not m:
                raise SystemExit(f"{path}: cannot read option '{text}'")
            letter, name, arg = m.groups()
            kind = {"=ARG": "required", "[=ARG]": "optional", None: "none"}[arg]
            kind = REFERENCE_ARGUMENT_FIXES.get((command, name), kind)
            entries[name] = (letter or "-", kind)
        options[command] = entries
    return options


def parser_table(drover, command):
    out = subprocess.run([drover, "options", command], capture_output=True, text=True,
                         check=True).stdout
    table = {}
    for line in out.splitlines():
        name, letter, kind = line.split("\t")
        table[name[2:]] = (letter, kind)
    return table


def rows(path):
    result = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise SystemExit(f"{path}:{number}: expected option<TAB>status<TAB>note")
        option, status, note = fields
        if not option.startswith("--"):
            raise SystemExit(f"{path}:{number}: '{option}' does not start with --")
        name = option[2:]
        if name in result:
            raise SystemExit(f"{path}:{number}: {option} listed twice")
        result[name] = (status, note.strip(), number)
    return result


def coverage_table(counts):
    lines = ["| command | Slurm's options | implemented | equivalent | warned | refused | covered |",
             "|---|---|---|---|---|---|---|"]
    total = {k: 0 for k in ("all", "implemented", "equivalent", "warned", "refused")}
    for command in COMMANDS:
        c = counts[command]
        for k in total:
            total[k] += c[k]
        covered = c["implemented"] + c["equivalent"]
        lines.append(f"| `{command}` | {c['all']} | {c['implemented']} | {c['equivalent']} | "
                     f"{c['warned']} | {c['refused']} | {100 * covered / c['all']:.0f}% |")
    covered = total["implemented"] + total["equivalent"]
    lines.append(f"| all | {total['all']} | {total['implemented']} | {total['equivalent']} | "
                 f"{total['warned']} | {total['refused']} | {100 * covered / total['all']:.1f}% |")
    return "\n".join(lines), 100 * covered / total["all"]


def main():
    drover, source = sys.argv[1], Path(sys.argv[2])
    update = "--update-docs" in sys.argv[3:]
    ref = reference(source / "src/cli/coverage/slurm-options-22.05.md")
    errors, counts = [], {}
    for command in COMMANDS:
        tsv = source / f"src/cli/coverage/{command}.tsv"
        listed, table = rows(tsv), parser_table(drover, command)
        count = {k: 0 for k in ("all", "implemented", "equivalent", "warned", "refused")}
        for name, (letter, kind) in ref[command].items():
            where = f"{command} --{name}"
            if name not in listed:
                errors.append(f"{where}: no row in {tsv.name}")
                continue
            status, note, number = listed[name]
            if status not in STATUSES - {"extra"}:
                errors.append(f"{tsv.name}:{number}: --{name}: status '{status}' is not one of "
                              "implemented, equivalent, warned, refused")
                continue
            count["all"] += 1
            count[status] += 1
            if status != "implemented" and not note:
                errors.append(f"{tsv.name}:{number}: --{name} is {status}: say how in the note")
            if status == "refused":
                if name in table and '"' not in note and "'" not in note:
                    errors.append(f"{where}: refused, but the parser accepts it; quote the "
                                  "refusal in the note or take it out of the parser")
                continue
            if name not in table:
                errors.append(f"{where}: {status}, but the parser does not accept it")
                continue
            got_letter, got_kind = table[name]
            if got_letter != letter:
                errors.append(f"{where}: short option '{got_letter}', Slurm's is '{letter}'")
            if got_kind != kind:
                errors.append(f"{where}: argument {got_kind}, Slurm's is {kind}")
        for name, (status, note, number) in listed.items():
            if name in ref[command]:
                continue
            if status != "extra":
                errors.append(f"{tsv.name}:{number}: --{name} is not one of Slurm's {command} "
                              "options: mark it extra (an alias or Drover's own)")
            elif not note:
                errors.append(f"{tsv.name}:{number}: --{name}: say in the note what it is")
            if name not in table:
                errors.append(f"{tsv.name}:{number}: --{name} is listed but the parser lacks it")
        for name in table:
            if name not in listed:
                errors.append(f"{command} --{name}: the parser accepts it but {tsv.name} has no "
                              "row for it")
        counts[command] = count
    table_text, percent = coverage_table(counts)
    docs = source / "docs/cli.md"
    text = docs.read_text()
    if BEGIN not in text or END not in text:
        errors.append(f"docs/cli.md lacks the {BEGIN} ... {END} block")
    else:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        wanted = f"{head}{BEGIN}\n{table_text}\n{END}{tail}"
        if wanted != text:
            if update:
                docs.write_text(wanted)
            else:
                errors.append("docs/cli.md's coverage table differs from the TSVs; rerun with "
                              "--update-docs")
    if percent < MINIMUM_PERCENT:
        errors.append(f"coverage {percent:.1f}% is under the floor of {MINIMUM_PERCENT}%")
    print(table_text)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
