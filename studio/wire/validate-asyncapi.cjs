// Validates an AsyncAPI document with the official parser (the one the
// AsyncAPI CLI and the code generators use) and exits 1 on any diagnostic
// of error or warning severity (the CLI's `asyncapi validate` reports
// warnings too) or when no document comes out.
// Usage: node validate-asyncapi.cjs <parser-install-dir> <document>
'use strict';
const path = require('path');
const { Parser, fromFile, DiagnosticSeverity } = require(path.join(process.argv[2], 'node_modules', '@asyncapi', 'parser'));

(async () => {
  const file = process.argv[3];
  const { document, diagnostics } = await fromFile(new Parser(), file).parse();
  const names = ['error', 'warning', 'info', 'hint'];
  let errors = 0;
  for (const d of diagnostics) {
    if (d.severity === DiagnosticSeverity.Error || d.severity === DiagnosticSeverity.Warning) errors++;
    console.log(`${file}: ${names[d.severity]} ${d.code} ${JSON.stringify(d.path)}: ${d.message}`);
  }
  console.log(`${file}: @asyncapi/parser: ${errors} errors or warnings, ${diagnostics.length} diagnostics, document ${document ? 'parsed' : 'NOT parsed'}`);
  process.exit(errors > 0 || !document ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
