// Prints one plain closing line, "tests: N passed, N failed, N skipped", after jest's own summary.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const line = `tests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests + results.numTodoTests} skipped`;
    process.stdout.write(`\n${line}\n`);
  }
}
module.exports = SummaryReporter;
