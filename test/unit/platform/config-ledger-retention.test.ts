import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/shared/errors.js';
import { loadAuditConfig, loadPublishConfig } from '../../../functions/platform/config.js';

const PUBLISH = {
  KAFKA_BROKERS: 'localhost:9092',
  TALLY_STREAMS_TABLE: 'streams',
  TALLY_LEDGER_TABLE: 'ledger',
  TALLY_RESERVATIONS_TABLE: 'reservations',
};
const AUDIT = {
  KAFKA_BROKERS: 'localhost:9092',
  TALLY_STREAMS_TABLE: 'streams',
  TALLY_LEDGER_TABLE: 'ledger',
  TALLY_RECEIPTS_TABLE: 'receipts',
  TALLY_AUDITS_TABLE: 'audits',
  TALLY_RECONCILE_REPORTS_TABLE: 'reports',
};

function refusal(load: () => unknown): ConfigurationError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  throw new Error('the configuration was accepted');
}

describe('TALLY_LEDGER_RETENTION_DAYS', () => {
  it('is 30 days unless set, for publish and audit alike', () => {
    expect(loadPublishConfig(PUBLISH).ledgerRetentionDays).toBe(30);
    expect(loadAuditConfig(AUDIT).ledgerRetentionDays).toBe(30);
    expect(
      loadAuditConfig({ ...AUDIT, TALLY_LEDGER_RETENTION_DAYS: '90' }).ledgerRetentionDays,
    ).toBe(90);
  });

  it('refuses an audit retention (fold) that is not inside it, naming both settings', () => {
    const error = refusal(() =>
      loadAuditConfig({
        ...AUDIT,
        TALLY_AUDIT_RETENTION_SECONDS: String(31 * 86_400),
      }),
    );
    expect(error.message).toContain('TALLY_AUDIT_RETENTION_SECONDS');
    expect(error.message).toContain('TALLY_LEDGER_RETENTION_DAYS (30 days');
    expect(error.field).toBe('TALLY_LEDGER_RETENTION_DAYS');
  });

  it('refuses an audit horizon that is not inside it, in publish and audit', () => {
    const env = { TALLY_AUDIT_HORIZON_SECONDS: '86400', TALLY_LEDGER_RETENTION_DAYS: '1' };
    for (const load of [
      () => loadPublishConfig({ ...PUBLISH, ...env }),
      () => loadAuditConfig({ ...AUDIT, ...env, TALLY_AUDIT_RETENTION_SECONDS: '86400' }),
    ]) {
      expect(refusal(load).message).toContain('TALLY_AUDIT_HORIZON_SECONDS (86400 s)');
    }
  });

  it('refuses a value out of range', () => {
    expect(
      refusal(() => loadPublishConfig({ ...PUBLISH, TALLY_LEDGER_RETENTION_DAYS: '0' })).message,
    ).toContain('TALLY_LEDGER_RETENTION_DAYS must be an integer from 1 to 3650');
  });
});
