/** A SQLite journal's store failing the engine's answers, as a disk failing would. */
import { Database } from '../../src/journal/sqlite.js';

/** Refuses every write of a row's answer (to `pending`) until the function it returns is called. */
export function refuseAnswers(path: string): () => void {
  const other = new Database(path);
  other.exec(`CREATE TRIGGER refuse_answers BEFORE UPDATE OF state ON payouts
    WHEN NEW.state = 'pending' BEGIN SELECT RAISE(ABORT, 'the disk refused the write'); END`);
  return () => {
    other.exec('DROP TRIGGER refuse_answers');
    other.close();
  };
}
