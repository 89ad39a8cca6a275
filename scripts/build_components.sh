#!/usr/bin/env bash
# Rebuild the app's components (needs Node >= 18 and npm): the Overview's journey picture and
# the 3-D point space. Their output, ui/components/frontend/build/, is committed, so running
# the app needs no Node; run this after editing anything in ui/components/frontend/src/ and
# commit build/.
set -euo pipefail
cd "$(dirname "$0")/../ui/components/frontend"
npm ci --no-audit --no-fund
npm run build
