"""Provider region codes from what the hyperscaler feeds say: pure lookups over built-in tables.

- AWS: region codes (``us-east-1``, ``us-gov-west-1``, ``cn-north-1``…) anywhere in a string such
  as a feed id (``ec2-us-east-1``), a guid (``#ec2-us-east-1_1676305380``) or an ARN; and the
  console's display names ("N. Virginia", "Canada (Central)", "US East (N. Virginia)").
  ``aws_regions_in`` only trusts a display name inside parentheses, the way AWS titles write it
  ("Amazon Elastic Compute Cloud (N. Virginia)"): a bare "London" or "Spain" in prose is too often
  not a region. ``aws_region_for_name`` reads a field that holds nothing but a display name.
- GCP: location ids from the status dashboard's ``{title, id}`` objects (``europe-west4``,
  ``global``, the multi-regions ``us``/``eu``/``asia``); a zone names its region.
- Azure: display names ("East US 2", "Central US EUAP") become codes (``eastus2``,
  ``centraluseuap``) by lower-casing and dropping spaces, and only names in the built-in list of
  regions count, so ordinary words never pass for a region.

Every function returns codes de-duplicated in order of first appearance and never raises.
"""

from __future__ import annotations

import re

from monitor.feeds.parsing.text import to_ascii, unique

_AWS_CODE = re.compile(
    r"(?<![a-z0-9])"
    r"((?:us-gov|us-isob|us-iso|eusc|us|eu|ap|sa|ca|me|af|il|mx|cn)"
    r"-(?:northeast|northwest|southeast|southwest|north|south|east|west|central)-\d{1,2})"
    r"(?!\d)",
    re.IGNORECASE,
)

# Display names as the AWS console, the Health Dashboard and the RSS titles write them; keys are
# folded with ``_fold`` (lower case, no accents, single spaces).
_AWS_NAMES: dict[str, str] = {
    "n. virginia": "us-east-1",
    "northern virginia": "us-east-1",
    "ohio": "us-east-2",
    "n. california": "us-west-1",
    "northern california": "us-west-1",
    "oregon": "us-west-2",
    "govcloud (us-west)": "us-gov-west-1",
    "govcloud (us)": "us-gov-west-1",
    "govcloud (us-east)": "us-gov-east-1",
    "canada (central)": "ca-central-1",
    "calgary": "ca-west-1",
    "mexico (central)": "mx-central-1",
    "sao paulo": "sa-east-1",
    "ireland": "eu-west-1",
    "london": "eu-west-2",
    "paris": "eu-west-3",
    "frankfurt": "eu-central-1",
    "zurich": "eu-central-2",
    "stockholm": "eu-north-1",
    "milan": "eu-south-1",
    "spain": "eu-south-2",
    "cape town": "af-south-1",
    "bahrain": "me-south-1",
    "uae": "me-central-1",
    "tel aviv": "il-central-1",
    "israel (tel aviv)": "il-central-1",
    "mumbai": "ap-south-1",
    "hyderabad": "ap-south-2",
    "hong kong": "ap-east-1",
    "taipei": "ap-east-2",
    "tokyo": "ap-northeast-1",
    "seoul": "ap-northeast-2",
    "osaka": "ap-northeast-3",
    "singapore": "ap-southeast-1",
    "sydney": "ap-southeast-2",
    "jakarta": "ap-southeast-3",
    "melbourne": "ap-southeast-4",
    "malaysia": "ap-southeast-5",
    "new zealand": "ap-southeast-6",
    "thailand": "ap-southeast-7",
    "beijing": "cn-north-1",
    "ningxia": "cn-northwest-1",
}

# A parenthesised name with the word before it: "Canada (Central)" needs "Canada" to mean
# ca-central-1, "Amazon Elastic Compute Cloud (N. Virginia)" needs only "N. Virginia".
_AWS_PAREN = re.compile(r"(?:([\w.]{1,30})\s*)?\(([^()]{1,40})\)")


def aws_regions_in(text: str) -> tuple[str, ...]:
    """AWS region codes named in ``text``: codes in any case, and display names in parentheses."""
    found = [(m.start(), m.group(1).lower()) for m in _AWS_CODE.finditer(text)]
    for match in _AWS_PAREN.finditer(text):
        word, inner = match.group(1), match.group(2)
        code = (word and _AWS_NAMES.get(_fold(f"{word} ({inner})"))) or _AWS_NAMES.get(_fold(inner))
        if code:
            found.append((match.start(), code))
    return unique(code for _, code in sorted(found, key=lambda pair: pair[0]))


def aws_region_for_name(name: str) -> str | None:
    """The AWS region code for a display name ("Oregon", "UAE", "US East (N. Virginia)") or a
    code; None when the name is not an AWS region."""
    folded = _fold(name)
    code = _AWS_NAMES.get(folded) or _AWS_NAMES.get(folded.removeprefix("aws "))
    if code:
        return code
    inner = re.search(r"\(([^()]+)\)\s*$", folded)
    if inner and inner.group(1) in _AWS_NAMES:
        return _AWS_NAMES[inner.group(1)]
    return folded if _AWS_CODE.fullmatch(folded) else None


_GCP_LOCATION = re.compile(r"[a-z][a-z0-9-]*")
_GCP_ZONE = re.compile(r"([a-z]+-[a-z]+\d+)-[a-z]")


def normalize_gcp_location(location_id: str) -> str:
    """A GCP location id as a region code: lower case, a zone (``us-central1-b``) as its region;
    ``""`` for text that is not a location id."""
    text = location_id.strip().lower()
    zone = _GCP_ZONE.fullmatch(text)
    if zone:
        return zone.group(1)
    return text if _GCP_LOCATION.fullmatch(text) else ""


def gcp_location_in_title(title: str) -> str:
    """The location id GCP writes in a location title ("Iowa (us-central1)"), else ``""``."""
    match = re.search(r"\(([^()]+)\)\s*$", title)
    return normalize_gcp_location(match.group(1)) if match else ""


# Azure regions by code: public cloud, EUAP canaries, US Government and China (21Vianet).
AZURE_REGIONS = frozenset(
    {
        "eastus", "eastus2", "westus", "westus2", "westus3", "centralus", "northcentralus",
        "southcentralus", "westcentralus", "eastus2euap", "centraluseuap", "canadacentral",
        "canadaeast", "brazilsouth", "brazilsoutheast", "mexicocentral", "chilecentral",
        "northeurope", "westeurope", "uksouth", "ukwest", "francecentral", "francesouth",
        "germanywestcentral", "germanynorth", "switzerlandnorth", "switzerlandwest",
        "norwayeast", "norwaywest", "swedencentral", "swedensouth", "polandcentral",
        "italynorth", "spaincentral", "austriaeast", "belgiumcentral", "denmarkeast",
        "eastasia", "southeastasia", "japaneast", "japanwest", "koreacentral", "koreasouth",
        "australiaeast", "australiasoutheast", "australiacentral", "australiacentral2",
        "centralindia", "southindia", "westindia", "jioindiacentral", "jioindiawest",
        "uaenorth", "uaecentral", "qatarcentral", "israelcentral", "southafricanorth",
        "southafricawest", "indonesiacentral", "malaysiawest", "newzealandnorth",
        "usgovvirginia", "usgovtexas", "usgovarizona", "usdodeast", "usdodcentral",
        "chinaeast", "chinaeast2", "chinaeast3", "chinanorth", "chinanorth2", "chinanorth3",
    }
)  # fmt: skip
_AZURE_MAX_WORDS = 4  # "East US 2 EUAP"
_WORD = re.compile(r"[A-Za-z0-9]+")


def azure_region_code(name: str) -> str | None:
    """The Azure region code for a display name ("West Europe") or a code; None otherwise."""
    code = re.sub(r"\s+", "", name).lower()
    return code if code in AZURE_REGIONS else None


def azure_regions_in(text: str) -> tuple[str, ...]:
    """Azure region codes named in ``text``, longest name first ("North Central US" is
    ``northcentralus``, not ``centralus``); names must not span punctuation."""
    runs = _word_runs(text)
    found: list[str] = []
    for run in runs:
        start = 0
        while start < len(run):
            size, code = _longest_azure_name(run, start)
            if code:
                found.append(code)
            start += size
    return unique(found)


def _word_runs(text: str) -> list[list[str]]:
    """Words grouped into runs separated by nothing but whitespace."""
    runs: list[list[str]] = []
    last_end = -1
    for match in _WORD.finditer(text):
        gap = text[last_end : match.start()] if last_end >= 0 else "x"
        if gap and not gap.isspace():
            runs.append([])
        runs[-1].append(match.group())
        last_end = match.end()
    return runs


def _longest_azure_name(words: list[str], start: int) -> tuple[int, str | None]:
    """How many words from ``start`` to consume, and the region they name (None: one word)."""
    for size in range(min(_AZURE_MAX_WORDS, len(words) - start), 0, -1):
        code = "".join(words[start : start + size]).lower()
        if code in AZURE_REGIONS:
            return size, code
    return 1, None


def _fold(name: str) -> str:
    """Lower case, accents dropped ("São Paulo" -> "sao paulo"), spaces single."""
    return " ".join(to_ascii(name).lower().split())
