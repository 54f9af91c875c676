#!/usr/bin/env python3
"""Writes test/fixtures/workbooks/<writer>.xlsx: the same order workbook as each writer makes it.

Each workbook has two sheets: "Read me" first (a note, no orders) and "orders" second, so a reader
that does not find the sheet by its name reads the wrong one. The orders: a header, two rows with
text ids, an own text column and two own number columns (shopPrice 3.1 and 12.5, ref 1001 and 1002).

Writers (each skipped with a note when absent; the committed files are what they wrote):
  exceljs      node + the repo's exceljs (as Excel writes: relative relationship targets)
  libreoffice  soffice --convert-to xlsx of a flat ODS (Debian: libreoffice-calc-nogui)
  openpyxl     Debian: python3-openpyxl (absolute relationship targets, /xl/worksheets/...)
  pandas       DataFrame.to_excel with engine openpyxl, its default without xlsxwriter (Debian: python3-pandas)
  xlsxwriter   Debian: python3-xlsxwriter

Run: python3 scripts/make-workbook-fixtures.py [folder]   (default: test/fixtures/workbooks)
Read by test/intake/workbook-writers.test.ts and test/outbox/workbook-writers.test.ts.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "test", "fixtures", "workbooks")
NOTE = [["This workbook's orders are on the sheet named orders."]]
HEADER = ["pid", "userId", "note", "shopPrice", "ref"]
ROWS = [
    ["PUBG-60", "5123456789", "first order", 3.1, 1001],
    ["PUBG-660", "5123456790", "second", 12.5, 1002],
]


def exceljs(path):
    script = """
import ExcelJS from 'exceljs';
const [path, data] = [process.argv[1], JSON.parse(process.argv[2])];
const wb = new ExcelJS.Workbook();
wb.addWorksheet('Read me').addRows(data.note);
const ws = wb.addWorksheet('orders');
ws.addRow(data.header);
ws.addRows(data.rows);
await wb.xlsx.writeFile(path);
"""
    data = json.dumps({"note": NOTE, "header": HEADER, "rows": ROWS})
    subprocess.run(["node", "--input-type=module", "-e", script, path, data], check=True, cwd=ROOT)


def libreoffice(path):
    if shutil.which("soffice") is None:
        raise ImportError("soffice")

    def cell(v):
        if isinstance(v, (int, float)):
            return f'<table:table-cell office:value-type="float" office:value="{v}"><text:p>{v}</text:p></table:table-cell>'
        return f'<table:table-cell office:value-type="string"><text:p>{v}</text:p></table:table-cell>'

    def table(name, rows):
        body = "".join("<table:table-row>" + "".join(cell(v) for v in r) + "</table:table-row>" for r in rows)
        return f'<table:table table:name="{name}">{body}</table:table>'

    fods = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">'
        "<office:body><office:spreadsheet>"
        + table("Read me", NOTE)
        + table("orders", [HEADER] + ROWS)
        + "</office:spreadsheet></office:body></office:document>"
    )
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "libreoffice.fods")
        with open(src, "w", encoding="utf-8") as f:
            f.write(fods)
        profile = "file://" + os.path.join(tmp, "profile")
        subprocess.run(
            ["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", "xlsx", "--outdir", tmp, src],
            check=True, stdout=subprocess.DEVNULL, timeout=180,
        )
        shutil.move(os.path.join(tmp, "libreoffice.xlsx"), path)


def openpyxl(path):
    import openpyxl as ox

    wb = ox.Workbook()
    note = wb.active
    note.title = "Read me"
    for r in NOTE:
        note.append(r)
    ws = wb.create_sheet("orders")
    ws.append(HEADER)
    for r in ROWS:
        ws.append(r)
    wb.save(path)


def pandas(path):
    import pandas as pd

    # openpyxl, as pandas uses when xlsxwriter is not installed: it writes absolute targets.
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        pd.DataFrame(NOTE).to_excel(writer, sheet_name="Read me", index=False, header=False)
        pd.DataFrame(ROWS, columns=HEADER).to_excel(writer, sheet_name="orders", index=False)


def xlsxwriter(path):
    import xlsxwriter as xw

    wb = xw.Workbook(path)
    note = wb.add_worksheet("Read me")
    for i, r in enumerate(NOTE):
        note.write_row(i, 0, r)
    ws = wb.add_worksheet("orders")
    for i, r in enumerate([HEADER] + ROWS):
        ws.write_row(i, 0, r)
    wb.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else OUT
    os.makedirs(out, exist_ok=True)
    made = []
    for name, write in [("exceljs", exceljs), ("libreoffice", libreoffice), ("openpyxl", openpyxl), ("pandas", pandas), ("xlsxwriter", xlsxwriter)]:
        path = os.path.join(out, f"{name}.xlsx")
        try:
            write(path)
            made.append(name)
        except ImportError as e:
            print(f"skipped {name}: {e} is not installed", file=sys.stderr)
    print("wrote " + ", ".join(made))


if __name__ == "__main__":
    main()
