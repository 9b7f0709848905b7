"""A deterministic, Synthea-like FHIR R4 corpus for the differential test and the benchmark.

``make_corpus(patients=40)`` gives about nine resources per patient: Patients (names with
accents, partial and full birth dates), Practitioners, Organizations, Encounters (periods),
Observations (LOINC codes, quantities, zoned date-times), Conditions (SNOMED, onset dates),
MedicationRequests (RxNorm), Appointments (participants), ServiceRequests and Coverage.
"""

from __future__ import annotations

import random
from typing import Any

FAMILIES = [
    "Smith",
    "Chen",
    "García",
    "Müller",
    "Nguyen",
    "O'Brien",
    "Okafor",
    "Rivera",
    "Søren",
    "Patel",
    "Johnson",
    "Łukasz",
    "Dubois",
    "Kowalski",
    "Haddad",
]
GIVENS = [
    "John",
    "Maria",
    "José",
    "Zoë",
    "Ana",
    "Wei",
    "Amélie",
    "Omar",
    "Priya",
    "Liam",
    "Chloé",
    "Noah",
    "Fatima",
    "Ivan",
    "Hana",
]
CITIES = [
    ("Boston", "MA", "02118"),
    ("Worcester", "MA", "01608"),
    ("Springfield", "MA", "01103"),
    ("Cambridge", "MA", "02139"),
    ("Lowell", "MA", "01852"),
]
LOINC = [
    ("8867-4", "Heart rate", "/min"),
    ("29463-7", "Body weight", "kg"),
    ("8302-2", "Body height", "cm"),
    ("2339-0", "Glucose", "mg/dL"),
    ("4548-4", "Hemoglobin A1c", "%"),
    ("8480-6", "Systolic blood pressure", "mm[Hg]"),
]
SNOMED = [
    ("44054006", "Diabetes mellitus type 2"),
    ("38341003", "Hypertension"),
    ("195662009", "Acute viral pharyngitis"),
    ("279039007", "Low back pain"),
    ("55822004", "Hyperlipidemia"),
    ("40055000", "Chronic sinusitis"),
]
RXNORM = [
    ("860975", "metformin 500 MG Oral Tablet"),
    ("314076", "lisinopril 10 MG Oral Tablet"),
    ("617312", "atorvastatin 20 MG Oral Tablet"),
    ("197361", "amlodipine 5 MG Oral Tablet"),
]
CPT = [
    ("72148", "MRI lumbar spine without contrast"),
    ("73721", "MRI knee without contrast"),
    ("93000", "Electrocardiogram"),
    ("80053", "Comprehensive metabolic panel"),
]
LOINC_SYS, SNOMED_SYS, RX_SYS, CPT_SYS = (
    "http://loinc.org",
    "http://snomed.info/sct",
    "http://www.nlm.nih.gov/research/umls/rxnorm",
    "http://www.ama-assn.org/go/cpt",
)
UCUM = "http://unitsofmeasure.org"
MRN = "http://hospital.example.org/mrn"
US_CORE_PATIENT = "http://hl7.org/fhir/us/core/StructureDefinition/us-core-patient"
SYNTHEA_TAG = {"system": "https://synthetichealth.github.io/synthea", "code": "generated"}


def _instant(rng: random.Random, year_from: int = 2023, year_to: int = 2025) -> str:
    y, m, d = rng.randint(year_from, year_to), rng.randint(1, 12), rng.randint(1, 28)
    hh, mm = rng.randint(7, 17), rng.choice([0, 15, 30, 45])
    return f"{y}-{m:02d}-{d:02d}T{hh:02d}:{mm:02d}:00Z"


def make_corpus(patients: int = 40, seed: int = 7) -> list[dict[str, Any]]:
    """The resources, references always ``Type/id``; ids are stable for a given seed."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    practitioners = []
    for i in range(max(3, patients // 4)):
        family = rng.choice(FAMILIES)
        p = {
            "resourceType": "Practitioner",
            "id": f"pr{i}",
            "active": True,
            "name": [{"family": family, "given": [rng.choice(GIVENS)], "prefix": ["Dr."]}],
            "identifier": [{"system": "http://hl7.org/fhir/sid/us-npi", "value": f"19{i:08d}"}],
        }
        practitioners.append(p)
        out.append(p)
    orgs = []
    for i, name in enumerate(["Blue Cross MA", "Aetna", "Harvard Pilgrim", "Tufts Health Plan"]):
        orgs.append(
            {
                "resourceType": "Organization",
                "id": f"org{i}",
                "name": name,
                "type": [
                    {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/organization-type",
                                "code": "ins",
                            }
                        ]
                    }
                ],
            }
        )
    out.extend(orgs)
    # Verial's own example: Appointment?patient=Patient/john-smith&status=booked
    out.append(
        {
            "resourceType": "Practitioner",
            "id": "rivera",
            "name": [{"family": "Rivera", "given": ["Elena"], "prefix": ["Dr."]}],
        }
    )
    out.append(
        {
            "resourceType": "Patient",
            "id": "john-smith",
            "gender": "male",
            "birthDate": "1962-11-02",
            "name": [{"family": "Smith", "given": ["John"]}],
            "identifier": [{"system": MRN, "value": "MRN0999"}],
            "meta": {"lastUpdated": "2024-03-01T12:00:00Z"},
        }
    )
    out.append(
        {
            "resourceType": "Appointment",
            "id": "appt-john-smith",
            "status": "booked",
            "start": "2026-12-03T14:00:00Z",
            "end": "2026-12-03T14:30:00Z",
            "participant": [
                {
                    "actor": {"reference": "Practitioner/rivera", "display": "Dr. Rivera"},
                    "status": "accepted",
                },
                {
                    "actor": {"reference": "Patient/john-smith", "display": "John Smith"},
                    "status": "accepted",
                },
            ],
        }
    )
    for n in range(patients):
        pid = f"pat{n}"
        family, given = FAMILIES[n % len(FAMILIES)], GIVENS[(n * 7) % len(GIVENS)]
        city, state, postal = CITIES[n % len(CITIES)]
        year = 1940 + (n * 3) % 70
        birth = f"{year}" if n % 13 == 5 else f"{year}-{1 + n % 12:02d}-{1 + n % 27:02d}"
        out.append(
            {
                "resourceType": "Patient",
                "id": pid,
                "active": n % 9 != 0,
                "identifier": [{"system": MRN, "value": f"MRN{1000 + n}"}],
                "name": [{"use": "official", "family": family, "given": [given]}],
                "gender": ["male", "female", "other", "unknown"][n % 4] if n % 11 else "female",
                "birthDate": birth,
                "address": [
                    {
                        "line": [f"{10 + n} Main St"],
                        "city": city,
                        "state": state,
                        "postalCode": postal,
                    }
                ],
                "telecom": [{"system": "phone", "value": f"555-01{n:02d}"}],
                "generalPractitioner": [
                    {"reference": f"Practitioner/{rng.choice(practitioners)['id']}"}
                ],
                "meta": {
                    "lastUpdated": _instant(rng, 2024, 2025),
                    **({"profile": [US_CORE_PATIENT]} if n % 2 else {}),
                },
            }
        )
        for e in range(2):
            start = _instant(rng)
            end = start[:11] + f"{min(int(start[11:13]) + 1, 23):02d}" + start[13:]
            eid = f"enc{n}-{e}"
            out.append(
                {
                    "resourceType": "Encounter",
                    "id": eid,
                    "status": rng.choice(["finished", "finished", "in-progress", "planned"]),
                    "class": {
                        "system": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
                        "code": rng.choice(["AMB", "EMER", "IMP"]),
                    },
                    "subject": {"reference": f"Patient/{pid}"},
                    "participant": [
                        {
                            "individual": {
                                "reference": f"Practitioner/{rng.choice(practitioners)['id']}"
                            }
                        }
                    ],
                    "period": {"start": start, "end": end},
                    **({"meta": {"tag": [SYNTHEA_TAG]}} if e == 0 and n % 3 == 0 else {}),
                }
            )
            for _ in range(rng.randint(1, 2)):
                code, display, unit = rng.choice(LOINC)
                value = round(rng.uniform(40, 200), 1)
                out.append(
                    {
                        "resourceType": "Observation",
                        "id": f"obs{len(out)}",
                        "status": rng.choice(["final", "final", "amended", "preliminary"]),
                        "category": [
                            {
                                "coding": [
                                    {
                                        "system": "http://terminology.hl7.org/CodeSystem/"
                                        "observation-category",
                                        "code": "vital-signs",
                                    }
                                ]
                            }
                        ],
                        "code": {
                            "coding": [{"system": LOINC_SYS, "code": code, "display": display}],
                            "text": display,
                        },
                        "subject": {"reference": f"Patient/{pid}"},
                        "encounter": {"reference": f"Encounter/{eid}"},
                        "effectiveDateTime": start,
                        "valueQuantity": {
                            "value": value,
                            "unit": unit,
                            "system": UCUM,
                            "code": unit,
                        },
                    }
                )
        if n % 3 != 2:
            code, display = rng.choice(SNOMED)
            out.append(
                {
                    "resourceType": "Condition",
                    "id": f"cond{n}",
                    "clinicalStatus": {
                        "coding": [
                            {
                                "system": "http://terminology.hl7.org/CodeSystem/"
                                "condition-clinical",
                                "code": rng.choice(["active", "resolved"]),
                            }
                        ]
                    },
                    "code": {
                        "coding": [{"system": SNOMED_SYS, "code": code, "display": display}],
                        "text": display,
                    },
                    "subject": {"reference": f"Patient/{pid}"},
                    "onsetDateTime": f"{rng.randint(2010, 2024)}-{rng.randint(1, 12):02d}-"
                    f"{rng.randint(1, 28):02d}",
                }
            )
        if n % 2 == 0:
            code, display = rng.choice(RXNORM)
            out.append(
                {
                    "resourceType": "MedicationRequest",
                    "id": f"medrx{n}",
                    "status": rng.choice(["active", "active", "completed", "stopped"]),
                    "intent": "order",
                    "medicationCodeableConcept": {
                        "coding": [{"system": RX_SYS, "code": code, "display": display}]
                    },
                    "subject": {"reference": f"Patient/{pid}"},
                    "requester": {"reference": f"Practitioner/{rng.choice(practitioners)['id']}"},
                    "authoredOn": _instant(rng)[:10],
                }
            )
        if n % 4 != 3:
            doctor = rng.choice(practitioners)
            start = _instant(rng, 2026, 2026)
            out.append(
                {
                    "resourceType": "Appointment",
                    "id": f"appt{n}",
                    "status": rng.choice(
                        ["booked", "booked", "proposed", "cancelled", "fulfilled"]
                    ),
                    "serviceType": [{"coding": [{"system": CPT_SYS, "code": rng.choice(CPT)[0]}]}],
                    "start": start,
                    "end": start[:14] + "59:00Z",
                    "participant": [
                        {
                            "actor": {
                                "reference": f"Practitioner/{doctor['id']}",
                                "display": f"Dr. {doctor['name'][0]['family']}",
                            },
                            "status": "accepted",
                        },
                        {
                            "actor": {
                                "reference": f"Patient/{pid}",
                                "display": f"{given} {family}",
                            },
                            "status": "accepted",
                        },
                    ],
                }
            )
        if n % 3 == 0:
            code, display = rng.choice(CPT)
            out.append(
                {
                    "resourceType": "ServiceRequest",
                    "id": f"sr{n}",
                    "status": rng.choice(["active", "draft", "completed"]),
                    "intent": "order",
                    "priority": rng.choice(["routine", "urgent"]),
                    "code": {"coding": [{"system": CPT_SYS, "code": code, "display": display}]},
                    "subject": {"reference": f"Patient/{pid}"},
                    "requester": {"reference": f"Practitioner/{rng.choice(practitioners)['id']}"},
                    "authoredOn": _instant(rng),
                }
            )
        if n % 2 == 1:
            org = rng.choice(orgs)
            out.append(
                {
                    "resourceType": "Coverage",
                    "id": f"cov{n}",
                    "status": "active",
                    "beneficiary": {"reference": f"Patient/{pid}"},
                    "payor": [{"reference": f"Organization/{org['id']}"}],
                    "subscriberId": f"W{100000 + n}",
                    "identifier": [
                        {"system": "http://payer.example.org/member", "value": f"M{n:05d}"}
                    ],
                    "period": {"start": f"{rng.randint(2020, 2024)}-01-01"},
                }
            )
    return out
