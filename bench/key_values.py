"""The key=value fields of the machine-readable lines the benchmark and lab
programs print ("BENCH what k=v ...", "LAB what k=v ..."), shared by the
scripts that tabulate and plot them. A value with spaces is quoted
(device="NVIDIA H100 80GB HBM3")."""
import shlex


def parse_fields(text):
    """{key: value} for each key=value word; values become int, float or str."""
    fields = {}
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        for convert in (int, float, str):
            try:
                fields[key] = convert(value)
                break
            except ValueError:
                continue
    return fields
