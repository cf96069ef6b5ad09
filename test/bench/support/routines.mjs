// Three routines of a finance team, file by file with the clock moved between runs, and
// what they cost a person: weekly supplier files with fixed amounts and an NF column,
// daily refund files with a pedido column, and monthly payroll with férias and 13º under
// a competência column. Each ends with the real duplicate the routine meets (last week's
// invoice sent again, now and 12 weeks later; yesterday's refunds re-exported; a
// payroll dropped again), which must be held. Shared by test/bench/false-alarms.mjs
// (against dist/) and test/inbox/routines.test.ts (against src/): a home is given as
// { drop(name, lines), advance(ms), run(), ledger() }.

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A valid CPF (its check digits computed) from nine digits. */
function cpf(nine) {
  const digits = String(nine).padStart(9, '0').split('').map(Number);
  for (const length of [9, 10]) {
    const sum = digits.slice(0, length).reduce((s, d, i) => s + d * (length + 1 - i), 0);
    digits.push(((sum * 10) % 11) % 10);
  }
  return digits.join('');
}

/** A valid CNPJ (its check digits computed) from twelve digits. */
function cnpj(twelve) {
  const digits = String(twelve).padStart(12, '0').split('').map(Number);
  for (const weights of [
    [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
    [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2],
  ]) {
    const sum = weights.reduce((s, w, i) => s + w * (digits[i] ?? 0), 0);
    const rest = sum % 11;
    digits.push(rest < 2 ? 0 : 11 - rest);
  }
  return digits.join('');
}

/** Cents as a Brazilian export writes them: "1.234,56". */
function reais(cents) {
  const whole = Math.trunc(cents / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `"${whole},${String(cents % 100).padStart(2, '0')}"`;
}

const SUPPLIERS = [
  ['Imobiliária Sol', 400_000],
  ['Contabilidade Lima', 180_000],
  ['Limpeza Brilho', 95_000],
  ['Segurança Forte', 230_000],
  ['TI Suporte Rápido', 150_000],
].map(([name, cents], i) => {
  const document = cnpj(112_223_330_001 + i * 1_000_003);
  const email = `financeiro${i}@fornecedor.example.com`;
  return { name, cents, row: `${name},${document},${email},(11) 3333-44${10 + i},${email}` };
});

const CUSTOMERS = Array.from({ length: 30 }, (_, i) => {
  const email = `cliente${i}@example.com`;
  return {
    row: `Cliente ${i},${cpf(100_000_001 + i * 7_919)},${email},(11) 98765-${String(1000 + i)},${email}`,
  };
});

const EMPLOYEES = Array.from({ length: 6 }, (_, i) => {
  const email = `func${i}@empresa.example.com`;
  return {
    salary: 300_000 + i * 50_000,
    row: `Funcionário ${i},${cpf(200_000_003 + i * 104_729)},${email},(21) 99876-${String(5000 + i)},${email}`,
  };
});

/**
 * Weekly supplier files: every supplier, every week, the same amount, the week's NF.
 * A holiday moves a file by two to seven days; then last week's file sent again.
 */
function weekly(weeks) {
  const header = 'Fornecedor,CNPJ,E-mail,Telefone,Chave Pix,NF,Valor';
  const nf = (week, supplier) => String(10_000 + week * 10 + supplier);
  const file = (week) => [
    header,
    ...SUPPLIERS.map((s, i) => `${s.row},${nf(week, i)},${reais(s.cents)}`),
  ];
  const steps = [];
  for (let week = 1; week <= weeks; week++) {
    // Every fourth file is late by a holiday, and the next one on time again.
    const late = week % 4 === 3 ? 2 + (week % 6) : 0;
    const early = week % 4 === 0 ? -(2 + ((week - 1) % 6)) : 0;
    steps.push({
      after: week === 1 ? 0 : 7 * DAY + late + early,
      name: `fornecedores-semana-${String(week).padStart(2, '0')}.csv`,
      lines: file(week),
    });
  }
  const last = steps[steps.length - 1];
  return {
    steps,
    duplicates: [
      { after: 7 * DAY, name: `${last.name.replace('.csv', '')} reenviado.csv`, lines: last.lines },
      { after: 12 * 7 * DAY, name: 'fornecedores-antigo.csv', lines: last.lines },
    ],
  };
}

/**
 * Daily refund files: a few customers each day, each refund its own pedido; the same
 * customer is refunded the same amount on many days (a fixed fee returned).
 */
function refunds(days) {
  const header = 'Nome,CPF,E-mail,Celular,Chave Pix,Pedido,Valor';
  const steps = [];
  let order = 500_000;
  for (let day = 1; day <= days; day++) {
    const rows = [];
    for (let k = 0; k < 8; k++) {
      const customer = CUSTOMERS[(day * 3 + k * 5) % CUSTOMERS.length];
      const cents = [1_990, 4_990, 9_900][(day + k) % 3];
      rows.push(`${customer.row},PED-${order++},${reais(cents)}`);
    }
    steps.push({
      after: day === 1 ? 0 : DAY,
      name: `reembolsos-dia-${String(day).padStart(2, '0')}.csv`,
      lines: [header, ...rows],
    });
  }
  const last = steps[steps.length - 1];
  return {
    steps,
    duplicates: [{ after: 3 * HOUR, name: 'reembolsos-reexportado.csv', lines: last.lines }],
  };
}

/**
 * Monthly payroll under a competência column: the salary file, then in some months
 * férias for some and the 13º in two installments, each in a file of its own, in the
 * month of the salary; then a month's payroll dropped again under another name.
 */
function payroll(months) {
  const header = 'Nome,CPF,E-mail,Celular,Chave Pix,Verba,Competência,Valor';
  const steps = [];
  for (let month = 0; month < months; month++) {
    const competencia = `${String(((9 + month) % 12) + 1).padStart(2, '0')}/2026`;
    const line = (e, verba, cents) => `${e.row},${verba},${competencia},${reais(cents)}`;
    // A raise every month: the payroll dropped again is then held by its competência
    // alone, not by a salary of the same amount paid within duplicateWindow.
    const salary = (e) => e.salary + month * 10_000;
    steps.push({
      after: month === 0 ? 0 : 30 * DAY,
      name: `folha-${competencia.replace('/', '-')}.csv`,
      lines: [header, ...EMPLOYEES.map((e) => line(e, 'Salário', salary(e)))],
    });
    steps.push({
      after: 2 * DAY,
      name: `ferias-${competencia.replace('/', '-')}.csv`,
      lines: [
        header,
        ...EMPLOYEES.filter((_, i) => i % 3 === month % 3).map((e) =>
          line(e, 'Férias', Math.round((salary(e) * 4) / 3)),
        ),
      ],
    });
    if (month === 1) {
      steps.push({
        after: DAY,
        name: '13o-primeira-parcela.csv',
        lines: [header, ...EMPLOYEES.map((e) => line(e, '13º 1ª parcela', salary(e) / 2))],
      });
    }
    if (month === 2) {
      steps.push({
        after: DAY,
        name: '13o-segunda-parcela.csv',
        lines: [header, ...EMPLOYEES.map((e) => line(e, '13º 2ª parcela', salary(e) / 2 - 1_234))],
      });
    }
  }
  return {
    steps,
    duplicates: [{ after: 10 * DAY, name: 'folha reenviada.csv', lines: steps[0].lines }],
  };
}

export const ROUTINES = {
  weekly: { make: weekly, full: 12, smoke: 3 },
  refunds: { make: refunds, full: 45, smoke: 4 },
  payroll: { make: payroll, full: 3, smoke: 3 },
};

/** Rows held in the summary of `file`, by the state counts of a pass. */
const heldIn = (summary) => summary?.rows.held ?? 0;

/**
 * Runs a routine of `count` files (ROUTINES[name].full or .smoke) in `home`, then its real
 * duplicates (with `reference: false`, its reference column left unread), and says what
 * a person met: held rows and files that needed a person among the routine's own files
 * (false alarms), the real duplicates held and paid, and orderIds the gateway created
 * more than once.
 */
export async function runRoutine(home, name, count, { reference = true } = {}) {
  const made = ROUTINES[name].make(count);
  // Without the reference, its column is one a run does not read: as before it was read.
  const unread = (step) => ({
    ...step,
    lines: [
      step.lines[0].replace(/,(NF|Pedido|Competência),/, ',Observação,'),
      ...step.lines.slice(1),
    ],
  });
  const steps = reference ? made.steps : made.steps.map(unread);
  const duplicates = reference ? made.duplicates : made.duplicates.map(unread);
  const figures = { routine: name, reference, files: 0, rows: 0, held: 0, needingAPerson: 0 };
  for (const step of steps) {
    home.advance(step.after);
    home.drop(step.name, step.lines);
    const { files } = await home.run();
    const held = heldIn(files.find((file) => file.file === step.name));
    figures.files++;
    figures.rows += step.lines.length - 1;
    figures.held += held;
    if (held > 0) figures.needingAPerson++;
  }
  figures.heldPercent = Number(((100 * figures.held) / figures.rows).toFixed(2));
  const cashOuts = () => home.ledger().filter((entry) => entry.object === 'cashout').length;
  const before = cashOuts();
  let duplicateRows = 0;
  let duplicatesHeld = 0;
  for (const step of duplicates) {
    home.advance(step.after);
    home.drop(step.name, step.lines);
    const { files } = await home.run();
    duplicateRows += step.lines.length - 1;
    duplicatesHeld += heldIn(files.find((file) => file.file === step.name));
  }
  const created = new Map();
  for (const entry of home.ledger()) {
    if (entry.object === 'cashout')
      created.set(entry.orderId, (created.get(entry.orderId) ?? 0) + 1);
  }
  figures.duplicateRows = duplicateRows;
  figures.duplicatesHeld = duplicatesHeld;
  // A real duplicate paid is a person paid twice, under an orderId of its own.
  figures.duplicatesPaid = cashOuts() - before;
  figures.paidTwice = [...created.values()].filter((times) => times > 1).length;
  figures.paid = created.size;
  return figures;
}
