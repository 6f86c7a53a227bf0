import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkVoterMetadata, VOTER_MARKER_FILE, writeVoterMarker } from './voter-marker.js';

describe('voter marker', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'mq-voter-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lets a first start through, and a restart with its metadata log', async () => {
    await checkVoterMetadata(dir, '__cluster_metadata', 1);
    await mkdir(path.join(dir, '__cluster_metadata'));
    await writeFile(path.join(dir, '__cluster_metadata', 'wal'), Buffer.alloc(64));
    await writeVoterMarker(dir, 1, Date.now());
    await checkVoterMetadata(dir, '__cluster_metadata', 1);
  });

  it('refuses a voter whose data directory was a voter but whose metadata log is gone, saying what to do', async () => {
    await writeVoterMarker(dir, 2, Date.now());
    await expect(checkVoterMetadata(dir, '__cluster_metadata', 2)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/refuses to start as a voter.*belonged to controller voter 2.*two controllers.*Restore __cluster_metadata.*delete .*controller-voter.properties/),
    });
    // An empty directory (a wiped log) is as good as none.
    await mkdir(path.join(dir, '__cluster_metadata'));
    await writeFile(path.join(dir, '__cluster_metadata', 'wal'), '');
    await expect(checkVoterMetadata(dir, '__cluster_metadata', 2)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    // The operator's way out: remove the marker.
    await rm(path.join(dir, VOTER_MARKER_FILE));
    await checkVoterMetadata(dir, '__cluster_metadata', 2);
  });
});
