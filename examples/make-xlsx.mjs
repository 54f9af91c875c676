// Writes examples/orders.xlsx, the workbook example: run `node examples/make-xlsx.mjs`.
// It shows what a reseller's own sheet may look like: the catalog's labels as headers
// ("Player ID", "Zone ID", "Server"), ids kept as Text, a Mobile Legends id written with its
// zone as "323456789 (2001)", and a second sheet that is not read (only the one named
// "orders", in any case, or else the first sheet is).
import ExcelJS from 'exceljs';
import { fileURLToPath } from 'node:url';

const out = fileURLToPath(new URL('./orders.xlsx', import.meta.url));
const wb = new ExcelJS.Workbook();
wb.creator = 'topup-runner examples';
wb.created = wb.modified = new Date(Date.UTC(2026, 0, 1));

const orders = wb.addWorksheet('Orders');
orders.columns = [
  { header: 'pid', width: 14 },
  { header: 'Player ID', width: 20, style: { numFmt: '@' } }, // formatted as Text: ids stay as typed
  { header: 'Zone ID', width: 10, style: { numFmt: '@' } },
  { header: 'Server', width: 10 },
  { header: 'quantity', width: 10 },
  { header: 'customer', width: 24 },
];
orders.addRows([
  ['PUBG-60', '5123456801', '', '', '', 'Ali'],
  ['ML-86', '323456789 (2001)', '', '', '', 'Budi: id and zone in one cell'],
  ['ML-172', '423456789', '8012', '', '', 'Citra'],
  ['WW-60', '800123468', '', 'Europe', '', 'Dana'],
  ['STEAM-5', '', '', '', 2, 'shop order 1004'],
]);
orders.getRow(1).font = { bold: true };

wb.addWorksheet('Notes').addRows([['This sheet is not read: topup reads the sheet named "orders", or else the first one.']]);

await wb.xlsx.writeFile(out);
process.stdout.write(`wrote ${out}\n`);
