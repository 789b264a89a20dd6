// Runs dynalite's own command line (same flags) with DynamoDB's item size: dynalite's
// validations (PutItem, UpdateItem, BatchWriteItem) call `db.itemSize` through the module's
// exports, so measuring names and strings in UTF-8 there makes them refuse what DynamoDB refuses.
import { createRequire } from 'node:module';
import { utf8Excess } from './dynamodb-item-size.js';

type ItemSize = (item: Parameters<typeof utf8Excess>[0], ...rest: unknown[]) => number;

const require = createRequire(import.meta.url);
const db = require('dynalite/db/index.js') as { itemSize: ItemSize };
const dynaliteItemSize = db.itemSize;
db.itemSize = (item, ...rest) => dynaliteItemSize(item, ...rest) + utf8Excess(item);
require('dynalite/cli.js');
