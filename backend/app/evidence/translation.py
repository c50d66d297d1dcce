"""The words stores write incidents in, read in English: "die Kasse sagt Preis nicht gefunden".

The knowledge base, the embedding model and the diagnosis's phrases are English; a store's
report in German, Dutch, Swedish, Danish, Norwegian, French, Spanish, Italian, Portuguese or
Polish names the same things in its own words ("Kartenzahlung", "kortbetalning", "paiement
par carte"). ``in_english`` swaps the words of the domain (tills, prices, card payments,
quantities, the web shop's basket, fridges) and of failure ("nicht gefunden", "fungerar inte")
for the English ones the docs use, longest first, and leaves every other word as it is; a
report written in a store language also loses that language's function words. It is a
glossary for retrieval, not a translator, and never shown to a reviewer.

Measured on 50 store-language reports written for it (``docs/architecture/intake.md``): the
product's first hypothesis hit@1 0.40 -> 0.83.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: Each line: the English words (as the knowledge base writes them, ``_`` for a space), then the
#: store languages' words for them. Forms match whole and case- and accent-blind; a trailing
#: ``*`` takes any ending ("kassa*" is "kassan", "kassaer"). A form that is an English word
#: without its accents ("refusé", "réduction", "paragon") or whose stem starts English ones
#: ("precio*" and "precious") is left out or written out whole; Dutch "pas" is a bank card,
#: not the French negation.
_GLOSSARY = """
not: nicht nich niet inte ikke ikkje nie não
no: kein keine keiner keinen geen ingen inga aucun aucune ningún ninguna ninguno nessun
    nessuna nenhum nenhuma żaden
must: muss müssen moet moeten måste doit doivent debe deben deve devono musi
greater_than: größer_als groter_dan större_än større_end større_enn plus_grand_que
    supérieur_à supérieure_à mayor_que maggiore_di maior_que większa_niż większe_niż
not_found: nicht_gefunden niet_gevonden hittades_inte hittas_inte ikke_fundet ikke_funnet
    introuvable non_trouvé* pas_trouvé* no_encontrad* no_se_encuentra non_trovat*
    não_encontrad* nie_znaleziono
not_working: funktioniert_nicht funktionieren_nicht geht_nicht gehen_nicht werkt_niet
    werken_niet fungerar_inte funkar_inte virker_ikke fungerer_ikke ne_fonctionne_pas
    ne_fonctionnent_pas ne_marche_pas ne_marchent_pas no_funciona* non_funziona*
    não_funciona* nie_działa*
does_not_respond: antwortet_nicht reagiert_nicht reageert_niet svarar_inte svarer_ikke
    ne_répond_pas ne_répondent_pas no_responde* non_rispond* não_respond* nie_odpowiada*
unavailable: nicht_erreichbar nicht_verfügbar niet_bereikbaar niet_beschikbaar
    inte_tillgänglig* otillgänglig* ikke_tilgængelig ikke_tilgjengelig indisponible*
    no_disponible* non_disponibil* indisponível* niedostępn*
timeout: tidsgränsen_överskreds zeitüberschreitung tidsgräns délai_dépassé délai_expiré
    tiempo_de_espera_agotado tiempo_agotado tempo_scaduto tempo_esgotado przekroczono_czas
rejected: abgelehnt lehnt* weigert geweigerd nekar nekas nekad* avvisa* afvis* refusent
    rechaza* rifiuta* recusa* odrzuca* odrzucon*
crashed: abgestürzt stürzt_ab crasht gecrasht kraschar kraschade plante se_cuelga
    se_cae si_blocca travou trava zawiesza_się
slow: tardan_muchísimo tarda_muchísimo tardan_mucho tarda_mucho langsam traag långsam*
    langsom* lente lentos lento* wolno
empty: leer leeg tomt tomma tomme vides vací* vuot* vazi* pust*
missing: fehlt fehlen ontbreekt ontbreken saknas mangler manque manquent falta faltan manca
    mancano brakuje
error: fehler fehlermeldung fehlerseite fout foutmelding fel felet felmeddelande fejl fejlen
    feil feilen erreur errore erro błąd
till: kassor kassorna kasse kassen kassa* kasserne caisse* caja cajas cassa casse caixa*
    kasa kasy kasach kasie kasami
card_payment: kartenzahlung* pinbetaling* kortbetalning* kortbetaling* paiement_par_carte
    paiements_par_carte paiement_carte pago_con_tarjeta pagos_con_tarjeta pago_con_tarjetas
    pagamento_con_carta pagamenti_con_carta pagamento_com_cartão płatność_kartą
    płatności_kartą
card_terminal: terminalen kartenterminal* kartenleser pinautomaat pinapparaat pinautomaten
    kortterminal* kortläsare* kortlæser* terminal_de_paiement tpe datáfono datafono
    terminal_de_pago terminale_pos terminal_de_cartão
payment: zahlung* bezahlung* betaling* betalning* paiement* pago pagos pagament* płatnoś*
price_lookup: preisabfrage prijsopvraag prisuppslag* prisopslag consultation_de_prix
    consulta_de_precio* consulta_prezzi consulta_de_preço*
price: preis preise prijs prijzen pris priset priser priserna prisen prix precio precios prezz*
    preço* cena ceny cen cenę
item: artikel artikeln artiklar artiklen varan varor varen artículo artículos articolo
    articoli artigo artigos produkt produkty
scan: scannen scannt skanna* scanne escanear escanea* scansion* skanować
sale: köp köpet verkauf verkäufe verkoop verkopen försäljning* salg salget vente ventes
    venta ventas vendit* venda vendas sprzedaż*
receipt: kassenbon kassabon bonnetje kvitto* kvittering* recibo scontrino
quantity: menge anzahl aantal antal antalet antall quantité* cantidad* quantità quantidade*
    ilość ilości
invalid: ungültig* ongeldig* ogiltig* ugyldig* invalide* inválid* non_valid* nieprawidłow*
amount: betrag bedrag belopp* beløb* montant* importe importes importo kwota kwoty
total: summe gesamtbetrag gesamtsumme totaal totalen summa summan somme totale
lines: zeilen positionen regels rader raderna linjer lignes líneas righe linhas pozycje
    artikelzeilen artikelregels artikelrader varelinje* varelinjer* lignes_d'articles
return: retoure retouren rückgabe retour retur returen devolución devoluciones reso
    devolução zwrot zwroty
cash: bargeld contant kontant kontanter espèces efectivo contanti dinheiro gotówka
update: aktualisierung mise_à_jour actualización aggiornamento atualização aktualizacja
    uppdatering* opdatering* oppdatering*
change: änderung umstellung wijziging ändring* ændring* endring* changement cambio modifica
    mudança zmiana
difference: differenz unterschied verschil* skillnad* forskel* diferencia
    differenza diferença różnica
web_shop: webbutik* nätbutik* nettbutikk* boutique_en_ligne onlineshop
    tienda_online tienda_en_línea negozio_online loja_online sklep_internetowy
basket: warenkorb warenkörbe winkelwagen* winkelmand* varukorg* indkøbskurv handlekurv
    panier paniers carrito carritos carrello carrelli carrinho koszyk*
order: bestellung* bestelling* beställning* bestilling* commande commandes pedido* ordine ordini
    encomenda* zamówieni*
discount: rabatt* korting* descuento* sconto desconto* zniżk* rabat gutschein* kortingsbon*
    bon_de_réduction cupón cupones buono_sconto cupom kupon*
free: gratuit* gratuito gratuita darmowy
checkout: kaufabschluss bestellabschluss abschluss_der_bestellung afrekenen
    kassan_i_webbutiken
stock: bestand lagerbestand voorraad lagersaldo lagerstatus existencias giacenza estoque
    stan_magazynowy
stock_unknown: bestand_unbekannt voorraad_onbekend lagersaldo_okänt stock_inconnu
    existencias_desconocidas stock_desconocido giacenza_sconosciuta estoque_desconhecido
    stan_nieznany
reservation: reservierung* reservering* reservation* réservation* reserva reservas
    prenotazion* rezerwacj*
dashboard: tableau_de_bord tablero panel_de_control cruscotto painel pulpit
chiller: kühlschrank* kühlung kühlregal* kühltruhe* koelkast* koeling koelcel* kylskåp*
    kyldisk* kylen køleskab* kjøleskap* frigo frigos réfrigérateur* frigorífico* nevera*
    frigorifer* geladeira* lodówk* meubles_frigorifiques meuble_frigorifique vitrine_réfrigérée
    koelvitrine* kühlvitrine* vitrina_refrigerada banco_frigo chłodziark*
temperature: temperatur temperaturen temperatuur temperatura*
store: winkel filiale filialen filiaal butik butiken butikken magasin tienda negozio loja
    sklep
customer: kunder kunden klant klanten kund kunderna cliente clientes klient*
"""

#: Function words of the store languages that are no English words: a report built on them is
#: in another language ("die Kasse sagt …", "los pagos de la web …"). "die", "an", "man",
#: "was", "we", "in", "is", "so", "till", "for" and "den" are English too and stay out; the
#: negations are glossary words ("not", "no"), never dropped.
_FUNCTION_WORDS = (
    # German
    "der das dem den des ein eine einer einem einen und oder aber ist sind war waren wird "
    "werden wurde hat haben hatte bei mit von vom zum zur auf aus nach seit wenn weil dass ich "
    "wir sie es er ihr uns mehr nur noch schon immer sein jedem jeder jede alle allen beim im "
    "ca kann können sagt zeigt kommt liegt "
    # Dutch
    "het een zijn wordt werd heeft hebben van voor naar bij uit maar ook nog al sinds altijd "
    "zoals kan kunnen zegt klopt kopt dan wij ze "
    # Swedish, Danish, Norwegian
    "och att det är var har hade ett en som på av med från för sedan alltid någon några går "
    "gick visar og af fra ei eit "
    # French
    "être de le la les un une des du et ou mais ne plus est sont était ont avec pour dans sur "
    "depuis toutes tous tout toujours nous vous ils elle qui que quand alors cette ce ces aux "
    # Spanish, Italian, Portuguese
    "el los las del y o pero es son da se está están estaba con para por en desde siempre "
    "nosotros cuando una unos unas muy mucho muchísimo al il lo gli della delle dei è sono nel "
    "nella sempre anche os as um uma são está com em também "
    # Polish
    "jest są był była się na od do dla przy ze czy już tylko"
)

#: English function words: a report that uses them as much is read as English.
_ENGLISH_WORDS = frozenset(
    "the a an is are was were and or but not no of to in on at for with from since after "
    "this that these those it its we our they their has have had be been can cannot does "
    "do did when while all any every".split()
)

_WORD_RE = re.compile(r"\w+")


def _plain(text: str) -> str:
    """``text`` without accents: "różnica" and a hurried "roznica" are one word."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


#: ``_FUNCTION_WORDS`` as they are compared: without accents.
FUNCTION_WORDS = frozenset(_plain(_FUNCTION_WORDS).split())


@lru_cache(maxsize=1)
def _glossary() -> tuple[re.Pattern[str], dict[str, str]]:
    """One alternation of every form, longest first, and each group's English words."""
    forms: list[tuple[str, str, str]] = []
    for entry in _entries():
        english, _, foreign = entry.partition(":")
        for form in foreign.split():
            stem = _plain(form.rstrip("*").replace("_", " ")).casefold()
            regex = re.escape(stem).replace(r"\ ", r"\s+") + (r"\w*" if form.endswith("*") else "")
            forms.append((stem, regex, english.replace("_", " ")))
    forms.sort(key=lambda f: -len(f[0]))
    alternation = "|".join(f"(?P<f{i}>{regex})" for i, (_, regex, _) in enumerate(forms))
    english_of = {f"f{i}": english for i, (_, _, english) in enumerate(forms)}
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE), english_of


def _entries() -> list[str]:
    """The glossary's entries, each continued line joined to its first."""
    entries: list[str] = []
    for line in _GLOSSARY.strip().splitlines():
        if line.startswith(" ") and entries:
            entries[-1] += line
        else:
            entries.append(line)
    return entries


def is_foreign(text: str) -> bool:
    """Whether ``text`` is written in a store language rather than English.

    More of its words are the store languages' function words (``FUNCTION_WORDS``) than
    English ones, and at least two: "Kasse 3 down, PLU 503" is English enough.
    """
    found = [_plain(w).casefold() for w in _WORD_RE.findall(text)]
    foreign = sum(w in FUNCTION_WORDS for w in found)
    return foreign >= 2 and foreign > sum(w in _ENGLISH_WORDS for w in found)


def in_english(text: str) -> str:
    """``text`` with the store languages' domain and failure words as the docs' English ones.

    A report written in a store language (``is_foreign``) also loses that language's function
    words: with "die … sagt bei jedem … an keiner … kann man mehr" around them, the English
    words the glossary gave are too few for the embedding to place the report near a doc.
    """
    pattern, english_of = _glossary()
    english = pattern.sub(lambda m: english_of[str(m.lastgroup)], _plain(text))
    if not is_foreign(text):
        return english
    kept = _WORD_RE.sub(
        lambda m: "" if m.group(0).casefold() in FUNCTION_WORDS else m.group(0), english
    )
    return " ".join(kept.split())
